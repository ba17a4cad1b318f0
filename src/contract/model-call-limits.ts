/**
 * Liveness of a model call, shared by the workflow (activity options) and the `callModel` activity:
 * the activity heartbeats every `everyMs` while the provider runs, and Temporal retries the call when no
 * heartbeat came for `timeout` — so a model call on a worker that died is retried after seconds, not
 * after the whole start-to-close timeout. 3 s (10 s until issue 23): a step interrupted by a worker SIGKILL
 * should go on within 5 s (`npm run bench:recovery`); a beat every second tolerates two seconds of a stalled
 * event loop before the server gives the turn to another attempt (a second model call, never a wrong result).
 */
export const MODEL_CALL_HEARTBEAT = {
  timeout: '3 seconds',
  everyMs: 1_000,
} as const;

/**
 * Deadlines and attempts of a model call. A run's model settings may override `turnTimeoutMs` and
 * `maxAttempts`; the activity aborts the provider's request when the turn's deadline passes, and its
 * start-to-close timeout is the deadline plus `startToCloseMarginMs`.
 */
export const MODEL_CALL_LIMITS = {
  /** How long one model turn may take before its request is aborted and the turn retried. */
  turnTimeoutMs: 90_000,
  startToCloseMarginMs: 15_000,
  /** Attempts of one turn (rate limits, overloads, timeouts). */
  maxAttempts: 5,
} as const;
