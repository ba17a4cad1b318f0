/**
 * Liveness of a model call, shared by the workflow (activity options) and the `callModel` activity:
 * the activity heartbeats every `everyMs` while the provider runs, and Temporal retries the call when no
 * heartbeat came for `timeout` — so a model call on a worker that died is retried after seconds, not
 * after the whole start-to-close timeout.
 */
export const MODEL_CALL_HEARTBEAT = {
  timeout: '10 seconds',
  everyMs: 2_000,
} as const;
