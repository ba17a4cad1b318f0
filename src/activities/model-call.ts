/**
 * One provider call inside the `callModel` activity: the activity's cancellation signal and the turn's
 * deadline combined into the signal the provider gets, heartbeats while it runs, and the end of the wait
 * when the deadline passes even if the provider ignores its signal. Failures become classified
 * `ApplicationFailure`s.
 */
import { Context } from '@temporalio/activity';
import { MODEL_CALL_HEARTBEAT } from '../contract/model-call-limits';
import {
  MODEL_FAILURE_CODES,
  MODEL_RETRY,
  classifyModelError,
  modelRetryDelayMs,
  type ModelFailureClassification,
} from '../model/model-failure';
import type { ModelCallContext } from '../contract/model-types';
import { engineFailure } from '../contract/activity-protocol';
import { combinedSignal } from './combined-signal';
import { workerHeartbeatDetails } from './dead-worker-sticky';
import { DurableToolsError } from '../contract/durable-tools-error';

/** The turn's deadline passed; the provider's request was aborted. */
export class ModelTurnTimeoutError extends DurableToolsError<typeof MODEL_FAILURE_CODES.timeout> {
  override readonly name = 'ModelTurnTimeoutError';

  constructor(readonly timeoutMs: number) {
    super(`The model did not answer within ${timeoutMs} ms; the request was aborted.`, MODEL_FAILURE_CODES.timeout);
  }
}

/**
 * Runs `call` with a signal that aborts when the activity is cancelled or `timeoutMs` passes, heartbeating
 * Temporal meanwhile. Returns or throws as soon as either happens: a provider that ignores the signal
 * cannot keep the activity (and its heartbeats) alive.
 */
export async function callWithDeadline<T>(
  call: (context: ModelCallContext) => Promise<T>,
  timeoutMs: number,
): Promise<T> {
  const activity = currentActivity();
  const deadlineController = new AbortController();
  const deadline = Date.now() + timeoutMs;
  let timer: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let onCancel: (() => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new ModelTurnTimeoutError(timeoutMs);
      deadlineController.abort(error);
      reject(error);
    }, timeoutMs);
    if (activity) {
      onCancel = () => reject(activity.cancellationSignal.reason);
      activity.cancellationSignal.addEventListener('abort', onCancel, { once: true });
    }
  });
  // Made after `onCancel` is listening: a cancellation must settle `stopped` before the provider's own rejection
  // (the activity then ends cancelled, not failed), as with `AbortSignal.any`, whose signals abort after their
  // sources' listeners have run.
  const combined = activity ? combinedSignal([activity.cancellationSignal, deadlineController.signal]) : undefined;
  const signal = combined?.signal ?? deadlineController.signal;
  // A local activity (the fast path's turn) has no heartbeat: its worker's liveness is the workflow task's.
  if (activity && !activity.info.isLocal) {
    // The details name this worker process (see announceWorker).
    const details = workerHeartbeatDetails();
    activity.heartbeat(details);
    heartbeat = setInterval(() => activity.heartbeat(details), MODEL_CALL_HEARTBEAT.everyMs);
  }
  try {
    return await Promise.race([call({ signal, deadline }), stopped]);
  } finally {
    clearTimeout(timer);
    clearInterval(heartbeat);
    combined?.dispose();
    if (activity && onCancel) activity.cancellationSignal.removeEventListener('abort', onCancel);
  }
}

function currentActivity(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined; // not inside an activity (direct calls in tests)
  }
}

/** Details of a model failure, in the failure's `details[0]`. */
export interface ModelFailureDetails {
  code: string;
  provider: string;
  hint: string;
  statusCode?: number;
  retryAfterMs?: number;
  /** What the provider said, without the hint (the reason a run gives when it stops waiting quotes it). */
  said?: string;
  /** The activity's attempt that failed (1 outside an activity). */
  attempt?: number;
}

/**
 * Turns what a provider threw into the failure Temporal sees: transient ones retried after the delay the
 * provider asked for (or jittered backoff), permanent ones non-retryable with a hint. A cancellation of the
 * activity is returned unchanged.
 */
export function modelFailure(error: unknown, provider: string, random: () => number = Math.random): unknown {
  try {
    return failureOf(error, provider, random);
  } catch {
    // A thrown value that cannot even be looked at (a proxy whose traps throw, an object without a prototype
    // that cannot become text): classified as what it is, an unrecognised provider error.
    return failureOf(
      new Error(`The model provider threw a value that cannot be read (${typeof error}).`),
      provider,
      random,
    );
  }
}

function failureOf(error: unknown, provider: string, random: () => number): unknown {
  const activity = currentActivity();
  if (activity?.cancellationSignal.aborted && !(error instanceof ModelTurnTimeoutError)) return error;
  const classification: ModelFailureClassification =
    error instanceof ModelTurnTimeoutError
      ? {
          code: MODEL_FAILURE_CODES.timeout,
          transient: true,
          message: error.message,
          hint: 'The provider did not answer in time; the turn is retried. Raise turnTimeoutMs in the model settings if it is just slow.',
        }
      : classifyModelError(error, { provider });
  const attempt = activity?.info.attempt ?? 1;
  const details: ModelFailureDetails = {
    code: classification.code,
    provider,
    hint: classification.hint,
    said: classification.message.slice(0, 500),
    attempt,
    ...(classification.statusCode !== undefined ? { statusCode: classification.statusCode } : {}),
    ...(classification.retryAfterMs !== undefined ? { retryAfterMs: classification.retryAfterMs } : {}),
  };
  const message = `${classification.message} (${classification.hint})`;
  const cause = error instanceof Error ? error : undefined;
  const common = { details: [details], ...(cause ? { cause } : {}) };
  if (!classification.transient) return engineFailure(classification.code, message, common);
  if (classification.retryAfterMs !== undefined && classification.retryAfterMs > MODEL_RETRY.maxRetryAfterMs) {
    return engineFailure(
      classification.code,
      `${message} The provider asks to wait ${Math.round(classification.retryAfterMs / 1000)} s, longer than the ${MODEL_RETRY.maxRetryAfterMs / 1000} s the engine waits.`,
      common,
    );
  }
  return engineFailure(classification.code, message, {
    ...common,
    retryable: true,
    nextRetryDelayMs: modelRetryDelayMs(classification, attempt, random),
  });
}

/**
 * The failure of a call the provider's breaker refused (provider-breaker.ts): the provider has failed since
 * `since` and another call probes it; this one did not reach it. Retried after the time of the next probe.
 */
export function breakerRefusal(
  provider: string,
  refusal: { retryAfterMs: number; since: number; lastCode: string; lastError: string },
): unknown {
  const code = (Object.values(MODEL_FAILURE_CODES) as string[]).includes(refusal.lastCode)
    ? (refusal.lastCode as ModelFailureClassification['code'])
    : MODEL_FAILURE_CODES.unavailable;
  const said =
    `not sent: ${provider} has failed since ${new Date(refusal.since).toISOString()} (${refusal.lastError}); ` +
    'one call at a time probes it';
  const details: ModelFailureDetails = {
    code,
    provider,
    hint: 'The worker waits for the provider to answer its probe before it sends further calls.',
    retryAfterMs: refusal.retryAfterMs,
    said,
    attempt: currentActivity()?.info.attempt ?? 1,
  };
  return engineFailure(code, `${said} (${details.hint})`, {
    details: [details],
    retryable: true,
    nextRetryDelayMs: refusal.retryAfterMs,
  });
}
