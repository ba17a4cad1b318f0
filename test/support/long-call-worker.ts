/**
 * A worker process for the long-call crash test, run as `node --import tsx test/support/long-call-worker.ts`
 * so that a SIGKILL of its pid kills the worker itself. Its idempotency keys and transcripts (where
 * checkpoints are stored) are SQLite files the next worker opens too. Prints {@link LONG_CALL_WORKER_READY}
 * once polling; runs until killed.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { SqliteIdempotencyStore } from '../../src/idempotency/sqlite-idempotency-store';
import { SqliteTranscriptStore } from '../../src/transcripts/sqlite-transcript-store';
import { createWorker } from '../../src/worker';
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

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`long-call-worker: ${name} is not set.`);
  return value;
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const env = LONG_CALL_WORKER_ENV;
  const { worker } = await createWorker({
    tools: createLongCallTools(required(env.downstreamUrl)),
    settings: {
      address: required(env.address),
      namespace: process.env[env.namespace] ?? 'default',
      taskQueue: required(env.taskQueue),
    },
    workflowBundle: { codePath: required(env.bundlePath) },
    idempotencyStore: new SqliteIdempotencyStore({ path: required(env.keysPath) }),
    transcripts: new SqliteTranscriptStore({ path: required(env.transcriptsPath) }),
    leaseMs: LONG_CALL_WORKER_LEASE_MS,
    workerOptions: { stickyQueueScheduleToStartTimeout: '2 seconds' },
  });
  const running = worker.run();
  console.log(`${LONG_CALL_WORKER_READY} pid=${process.pid}`);
  await running;
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error('long-call-worker failed:', error);
    process.exit(1);
  });
}
