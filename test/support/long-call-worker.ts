/**
 * A worker process for the long-call crash test, run as `node --import tsx test/support/long-call-worker.ts`
 * so that a SIGKILL of its pid kills the worker itself. Its idempotency keys and transcripts (where
 * checkpoints are stored) are SQLite files the next worker opens too. Prints {@link LONG_CALL_WORKER_READY}
 * once polling; runs until killed.
 */
import { runWorkerProcess, workerProcessEnv } from './worker-process-main';
import { createLongCallTools } from './long-call-tools';

/** Environment variables the long-call worker reads. */
export const LONG_CALL_WORKER_ENV = workerProcessEnv('DT_LONG', { downstreamUrl: 'DOWNSTREAM_URL' });

/** The line the worker prints when it starts polling. */
export const LONG_CALL_WORKER_READY = 'long-call-worker ready';

/** Lease of a key while a call runs: short, so the next worker takes over soon after a kill. */
export const LONG_CALL_WORKER_LEASE_MS = 1500;

/** This script, for `spawnTestWorkerProcess`. */
export const LONG_CALL_WORKER = { script: __filename, env: LONG_CALL_WORKER_ENV, ready: LONG_CALL_WORKER_READY };

if (require.main === module) {
  runWorkerProcess('long-call-worker', LONG_CALL_WORKER_ENV, (required) => ({
    tools: createLongCallTools(required(LONG_CALL_WORKER_ENV.downstreamUrl)),
    leaseMs: LONG_CALL_WORKER_LEASE_MS,
  }));
}
