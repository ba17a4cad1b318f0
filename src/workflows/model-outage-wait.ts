import { ApplicationFailure, getCurrentDetails, patched, setCurrentDetails, sleep } from '@temporalio/workflow';
import { applicationFailureOf } from '../contract/activity-protocol';
import type { ModelSettings } from '../contract/model-types';
import {
  MODEL_OUTAGE_PATCH,
  gaveUpText,
  isModelOutageType,
  outageBackoffMs,
  outageWaitMs,
  waitingText,
  type ModelProviderWait,
} from '../contract/model-outage';
import type { RunLoop } from './run-types';

/*
 * A run waits out its model provider's outage (docs/models.md, "Provider outages"): when an ask of the model
 * fails with an outage (unreachable, 5xx, 429, 529) after the activity's own attempts, the run shows
 * `waiting for model provider <name> since <time>` (run state, UI current details) and asks again after a
 * capped, jittered pause on a server timer (never inside a local activity), until the model setting
 * `outageWaitMs` (default 1 h) has passed since the outage began; then it gives up saying so. Runs that recorded
 * no `patched('durable-tools/model-outage-wait')` fail at the first such failure, as they did.
 */

/** An outage failure of one ask, as the workflow reads it. */
interface OutageFailure {
  code: string;
  said: string;
  attempts: number;
  retryAfterMs?: number;
}

/** The outage behind a failed ask of the model, if it is one. */
function outageOf(error: unknown): OutageFailure | undefined {
  const failure = applicationFailureOf(error);
  if (!failure || !isModelOutageType(failure.type)) return undefined;
  const details = (failure.details?.[0] ?? {}) as { said?: unknown; attempt?: unknown; retryAfterMs?: unknown };
  return {
    code: failure.type!,
    said: typeof details.said === 'string' ? details.said : failure.message,
    attempts: typeof details.attempt === 'number' && details.attempt >= 1 ? details.attempt : 1,
    ...(typeof details.retryAfterMs === 'number' ? { retryAfterMs: details.retryAfterMs } : {}),
  };
}

/**
 * Whether this failure of the model is an outage the run waits out: an outage, in a run that waits outages
 * out (the patch is evaluated here, at the first such failure only, so histories from before replay as recorded).
 */
export function waitsOutOutage(error: unknown): boolean {
  return outageOf(error) !== undefined && patched(MODEL_OUTAGE_PATCH);
}

/**
 * Asks the model with `ask`, waiting out an outage of its provider: see the module's note. Returns the turn of
 * the first ask that answers; any other failure is thrown as it came.
 */
export async function waitingOutOutages<T>(run: Pick<RunLoop, 'input' | 'state'>, ask: () => Promise<T>): Promise<T> {
  let wait: ModelProviderWait | undefined;
  let asks = 0;
  const before = getCurrentDetails();
  try {
    for (;;) {
      const askedAt = Date.now();
      try {
        return await ask();
      } catch (error) {
        if (!waitsOutOutage(error)) throw error;
        const outage = outageOf(error)!;
        wait = nextWait(wait, run.input.model, outage, askedAt);
        asks += 1;
        const now = Date.now();
        const windowMs = outageWaitMs(run.input.model);
        const remainingMs = wait.since + windowMs - now;
        if (remainingMs <= 0) {
          throw ApplicationFailure.create({
            type: outage.code,
            message: gaveUpText(wait, now, windowMs),
            nonRetryable: true,
          });
        }
        run.state.waitingForModel = wait;
        setCurrentDetails(waitingText(wait));
        await sleep(outageBackoffMs(asks, Math.random, remainingMs, outage.retryAfterMs));
      }
    }
  } finally {
    if (wait) {
      delete run.state.waitingForModel;
      setCurrentDetails(before);
    }
  }
}

function nextWait(
  wait: ModelProviderWait | undefined,
  settings: ModelSettings,
  outage: OutageFailure,
  askedAt: number,
): ModelProviderWait {
  return {
    provider: settings.provider,
    ...(typeof settings.model === 'string' ? { model: settings.model } : {}),
    since: wait?.since ?? askedAt,
    attempts: (wait?.attempts ?? 0) + outage.attempts,
    lastCode: outage.code,
    lastError: outage.said.slice(0, 300),
  };
}
