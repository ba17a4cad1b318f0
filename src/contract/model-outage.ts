/**
 * Waiting out a model provider's outage (docs/models.md, "Provider outages"): which model failures are an
 * outage, how long a run waits one out, the backoff between its asks, and the words it shows meanwhile and when it
 * gives up. Pure data and arithmetic, safe in workflow code.
 */
import { ENGINE_FAILURE_TYPES } from './activity-protocol';

/** The `patched()` id of runs that wait out a provider outage instead of failing after the activity's attempts. */
export const MODEL_OUTAGE_PATCH = 'durable-tools/model-outage-wait';

/** Bounds of the wait. */
export const MODEL_OUTAGE = {
  /** Default of the model setting `outageWaitMs`: how long a run waits for its provider before it gives up. */
  waitMs: 60 * 60_000,
  /** First pause between two asks of the run once its provider is down. */
  initialBackoffMs: 2_000,
  /** Longest pause between two asks (a provider's Retry-After may ask for longer, up to the window's end). */
  maxBackoffMs: 30_000,
} as const;

/** The failure types that mean "the provider is down or overloaded": unreachable, 5xx, 429, 529. */
export const MODEL_OUTAGE_TYPES: readonly string[] = [
  ENGINE_FAILURE_TYPES.MODEL_UNAVAILABLE,
  ENGINE_FAILURE_TYPES.MODEL_OVERLOADED,
  ENGINE_FAILURE_TYPES.MODEL_RATE_LIMITED,
];

/** Whether a failure type is an outage the run waits out. */
export function isModelOutageType(type: string | undefined | null): boolean {
  return type !== undefined && type !== null && MODEL_OUTAGE_TYPES.includes(type);
}

/** A run waiting for its model provider, as the run state shows it. */
export interface ModelProviderWait {
  /** The provider's name in the run's model settings (`openai`, `anthropic`, ...). */
  provider: string;
  /** The model id of the settings, when they name one. */
  model?: string;
  /** Epoch ms (workflow time) of the first failed ask of this wait. */
  since: number;
  /** Attempts so far (each ask of the model activity counts its own attempts). */
  attempts: number;
  /** The failure type of the last attempt. */
  lastCode: string;
  /** What the provider (or the worker's breaker) said last, shortened. */
  lastError: string;
}

/** The run's window: the model setting `outageWaitMs` (0 waits nothing), else {@link MODEL_OUTAGE.waitMs}. */
export function outageWaitMs(settings: Readonly<Record<string, unknown>>): number {
  const value = settings.outageWaitMs;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : MODEL_OUTAGE.waitMs;
}

/**
 * The pause before the next ask: the provider's own delay when it gave one, else a doubling ceiling from
 * {@link MODEL_OUTAGE.initialBackoffMs} to {@link MODEL_OUTAGE.maxBackoffMs} with equal jitter (half the ceiling
 * plus a random half), so the runs of one outage do not ask all at once. Never past `remainingMs`.
 */
export function outageBackoffMs(
  asks: number,
  random: () => number,
  remainingMs: number,
  retryAfterMs?: number,
): number {
  const ceiling = Math.min(MODEL_OUTAGE.maxBackoffMs, MODEL_OUTAGE.initialBackoffMs * 2 ** Math.max(0, asks - 1));
  const jittered = Math.round(ceiling / 2 + (random() * ceiling) / 2);
  const wanted = retryAfterMs !== undefined && retryAfterMs > jittered ? retryAfterMs : jittered;
  return Math.max(1, Math.min(wanted, remainingMs));
}

/** `openai (gpt-4.1-mini)`, or the provider alone. */
export function providerLabel(wait: Pick<ModelProviderWait, 'provider' | 'model'>): string {
  return wait.model ? `${wait.provider} (${wait.model})` : wait.provider;
}

/** The line the UI's current details, `show` and `run` print: `waiting for model provider <name> since <time>`. */
export function waitingText(wait: ModelProviderWait): string {
  return (
    `waiting for model provider ${providerLabel(wait)} since ${new Date(wait.since).toISOString()} ` +
    `(${wait.attempts} attempt${wait.attempts === 1 ? '' : 's'}; last: ${wait.lastCode}: ${wait.lastError})`
  );
}

/** `1 h 0 min`, `3 min 12 s`, `40 s`. */
export function durationText(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** The reason a run gives when its window passed: what happened, and what to raise to wait longer. */
export function gaveUpText(wait: ModelProviderWait, now: number, windowMs: number): string {
  return (
    `The model provider ${providerLabel(wait)} was down or overloaded since ${new Date(wait.since).toISOString()}: ` +
    `gave up after ${wait.attempts} attempt${wait.attempts === 1 ? '' : 's'} over ${durationText(now - wait.since)} ` +
    `(last: ${wait.lastError}). Raise outageWaitMs in the model settings (now ${durationText(windowMs)}) to wait longer.`
  );
}
