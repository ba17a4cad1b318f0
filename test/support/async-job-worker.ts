/**
 * A worker process for the async-job crash test, run as `node --import tsx test/support/async-job-worker.ts`
 * so that a SIGKILL of its pid kills the worker itself. Its idempotency keys and transcripts (where job
 * records and checkpoints live) are SQLite files the next worker opens too. Prints
 * {@link ASYNC_JOB_WORKER_READY} once polling; runs until killed.
 */
import { runWorkerProcess } from './worker-process-main';
import { createAsyncJobTools } from './async-job-tools';

/** Environment variables the async-job worker reads. */
export const ASYNC_JOB_WORKER_ENV = {
  address: 'DT_JOB_ADDRESS',
  namespace: 'DT_JOB_NAMESPACE',
  taskQueue: 'DT_JOB_TASK_QUEUE',
  bundlePath: 'DT_JOB_WORKFLOW_BUNDLE',
  downstreamUrl: 'DT_JOB_DOWNSTREAM_URL',
  keysPath: 'DT_JOB_KEYS_DB',
  transcriptsPath: 'DT_JOB_TRANSCRIPTS_DB',
} as const;

/** The line the worker prints when it starts polling. */
export const ASYNC_JOB_WORKER_READY = 'async-job-worker ready';

/** Lease of a key while a call runs: short, so the next worker takes over soon after a kill. */
export const ASYNC_JOB_WORKER_LEASE_MS = 1500;

if (require.main === module) {
  runWorkerProcess('async-job-worker', ASYNC_JOB_WORKER_ENV, (required) => ({
    tools: createAsyncJobTools({
      downstream: required(ASYNC_JOB_WORKER_ENV.downstreamUrl),
      callbacks: 'http://127.0.0.1:9/unused',
    }),
    leaseMs: ASYNC_JOB_WORKER_LEASE_MS,
  }));
}
