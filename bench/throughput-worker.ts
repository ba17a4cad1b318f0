/**
 * A worker process of `npm run bench:throughput`: `createWorker` with the benchmark's tools, the Postgres
 * idempotency store and the Postgres transcript store (tables shared by every worker process of the bench),
 * and the default worker tuning. Sends `{ type: 'ready' }`, answers `{ type: 'cpu' }`, stops on `{ type: 'stop' }`.
 */
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { PostgresIdempotencyStore } from '../src/stores/idempotency/postgres-idempotency-store';
import { PostgresTranscriptStore } from '../src/stores/transcripts/postgres-transcript-store';
import { createWorker } from '../src/runtime/create-worker';
import { AGENT_BENCH_TOOLS } from './agent-bench-tools';

/** Environment the bench passes to this process. */
export const THROUGHPUT_WORKER_ENV = {
  address: 'BENCH_TEMPORAL_ADDRESS',
  namespace: 'BENCH_NAMESPACE',
  taskQueue: 'BENCH_TASK_QUEUE',
  bundlePath: 'BENCH_WORKFLOW_BUNDLE',
  postgresUrl: 'BENCH_POSTGRES_URL',
  keysTable: 'BENCH_KEYS_TABLE',
  transcriptsTable: 'BENCH_TRANSCRIPTS_TABLE',
} as const;

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`throughput-worker: ${name} is not set.`);
  return value;
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const connectionString = env(THROUGHPUT_WORKER_ENV.postgresUrl);
  const idempotencyStore = new PostgresIdempotencyStore({
    connectionString,
    table: env(THROUGHPUT_WORKER_ENV.keysTable),
  });
  const transcripts = new PostgresTranscriptStore({
    connectionString,
    table: env(THROUGHPUT_WORKER_ENV.transcriptsTable),
  });
  const connection = await NativeConnection.connect({ address: env(THROUGHPUT_WORKER_ENV.address) });
  const { worker } = await createWorker({
    // Stores not given here stay in memory (durable ones are the default).
    stores: 'memory',
    tools: AGENT_BENCH_TOOLS,
    connection,
    settings: { namespace: env(THROUGHPUT_WORKER_ENV.namespace), taskQueue: env(THROUGHPUT_WORKER_ENV.taskQueue) },
    workflowBundle: { codePath: env(THROUGHPUT_WORKER_ENV.bundlePath) },
    idempotencyStore,
    transcripts,
  });
  process.on('message', (message: { type?: string }) => {
    if (message.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send?.({ type: 'cpu', user, system });
    } else if (message.type === 'stop') {
      worker.shutdown();
    }
  });
  const running = worker.run();
  process.send?.({ type: 'ready' });
  try {
    await running;
  } finally {
    await connection.close();
    await idempotencyStore.close();
    await transcripts.close();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
