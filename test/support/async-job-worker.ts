/**
 * A worker process for the async-job crash test, run as `node --import tsx test/support/async-job-worker.ts`
 * so that a SIGKILL of its pid kills the worker itself. Its idempotency keys and transcripts (where job
 * records and checkpoints live) are SQLite files the next worker opens too. Prints
 * {@link ASYNC_JOB_WORKER_READY} once polling; runs until killed.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { SqliteIdempotencyStore } from '../../src/idempotency/sqlite-idempotency-store';
import { SqliteTranscriptStore } from '../../src/transcripts/sqlite-transcript-store';
import { createWorker } from '../../src/worker';
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

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`async-job-worker: ${name} is not set.`);
  return value;
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const env = ASYNC_JOB_WORKER_ENV;
  const { worker } = await createWorker({
    tools: createAsyncJobTools({ downstream: required(env.downstreamUrl), callbacks: 'http://127.0.0.1:9/unused' }),
    settings: {
      address: required(env.address),
      namespace: process.env[env.namespace] ?? 'default',
      taskQueue: required(env.taskQueue),
    },
    workflowBundle: { codePath: required(env.bundlePath) },
    idempotencyStore: new SqliteIdempotencyStore({ path: required(env.keysPath) }),
    transcripts: new SqliteTranscriptStore({ path: required(env.transcriptsPath) }),
    leaseMs: ASYNC_JOB_WORKER_LEASE_MS,
    workerOptions: { stickyQueueScheduleToStartTimeout: '2 seconds' },
  });
  const running = worker.run();
  console.log(`${ASYNC_JOB_WORKER_READY} pid=${process.pid}`);
  await running;
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error('async-job-worker failed:', error);
    process.exit(1);
  });
}
