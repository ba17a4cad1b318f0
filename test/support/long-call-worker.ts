/**
 * A worker process for the long-call crash test, run as `node --import tsx test/support/long-call-worker.ts`
 * so that a SIGKILL of its pid kills the worker itself. Its idempotency keys and transcripts (where
 * checkpoints are stored) are SQLite files the next worker opens too. Prints {@link LONG_CALL_WORKER_READY}
 * once polling; runs until killed.
 */
import { runWorkerProcess } from './worker-process-main';
import { createLongCallTools } from './long-call-tools';

/** Environment variables the long-call worker reads. */
export const LONG_CALL_WORKER_ENV = {
  address: 'DT_LONG_ADDRESS',
  namespace: 'DT_LONG_NAMESPACE',
  taskQueue: 'DT_LONG_TASK_QUEUE',
  bundlePath: 'DT_LONG_WORKFLOW_BUNDLE',
  downstreamUrl: 'DT_LONG_DOWNSTREAM_URL',
  keysPath: 'DT_LONG_KEYS_DB',
  transcriptsPath: 'DT_LONG_TRANSCRIPTS_DB',
} as const;

/** The line the worker prints when it starts polling. */
export const LONG_CALL_WORKER_READY = 'long-call-worker ready';

/** Lease of a key while a call runs: short, so the next worker takes over soon after a kill. */
export const LONG_CALL_WORKER_LEASE_MS = 1500;

if (require.main === module) {
  runWorkerProcess('long-call-worker', LONG_CALL_WORKER_ENV, (required) => ({
    tools: createLongCallTools(required(LONG_CALL_WORKER_ENV.downstreamUrl)),
    leaseMs: LONG_CALL_WORKER_LEASE_MS,
  }));
}
