/**
 * A worker process for the async-job crash test, run as `node --import tsx test/support/async-job-worker.ts`
 * so that a SIGKILL of its pid kills the worker itself. Its idempotency keys and transcripts (where job
 * records and checkpoints live) are SQLite files the next worker opens too. Prints
 * {@link ASYNC_JOB_WORKER_READY} once polling; runs until killed.
 */
import { runWorkerProcess, workerProcessEnv } from './worker-process-main';
import { createAsyncJobTools } from './async-job-tools';

/** Environment variables the async-job worker reads. */
export const ASYNC_JOB_WORKER_ENV = workerProcessEnv('DT_JOB', { downstreamUrl: 'DOWNSTREAM_URL' });

/** The line the worker prints when it starts polling. */
export const ASYNC_JOB_WORKER_READY = 'async-job-worker ready';

/** Lease of a key while a call runs: short, so the next worker takes over soon after a kill. */
export const ASYNC_JOB_WORKER_LEASE_MS = 1500;

/** This script, for `spawnTestWorkerProcess`. */
export const ASYNC_JOB_WORKER = { script: __filename, env: ASYNC_JOB_WORKER_ENV, ready: ASYNC_JOB_WORKER_READY };

if (require.main === module) {
  runWorkerProcess('async-job-worker', ASYNC_JOB_WORKER_ENV, (required) => ({
    tools: createAsyncJobTools({
      downstream: required(ASYNC_JOB_WORKER_ENV.downstreamUrl),
      callbacks: 'http://127.0.0.1:9/unused',
    }),
    leaseMs: ASYNC_JOB_WORKER_LEASE_MS,
  }));
}
