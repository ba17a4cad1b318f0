/**
 * The worker process of `npm run bench`: one Temporal worker with a bare no-op activity and a no-op tool
 * per wrapper configuration (see `overhead-workflows.ts`), each with its own key store. Runs as a child of
 * the bench so its CPU time is the worker's alone; answers `{ type: 'cpu' }` with `process.cpuUsage()` and
 * stops on `{ type: 'stop' }`. Settings come from the environment the bench sets.
 */
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { Pool } from 'pg';
import { z } from 'zod';
import { createToolActivities } from '../src/activities/tool-activities';
import { PostgresIdempotencyStore } from '../src/stores/idempotency/postgres-idempotency-store';
import { SqliteIdempotencyStore } from '../src/stores/idempotency/sqlite-idempotency-store';
import type { IdempotencyStore } from '../src/stores/idempotency/idempotency-store';
import { defineTool } from '../src/tools/define-tool';
import { createToolRegistry } from '../src/tools/tool-registry';
import { OVERHEAD_TOOL_NAMES } from './overhead-workflows';

/** Environment the bench passes to this process. */
export const OVERHEAD_WORKER_ENV = {
  address: 'BENCH_TEMPORAL_ADDRESS',
  namespace: 'BENCH_NAMESPACE',
  taskQueue: 'BENCH_TASK_QUEUE',
  sqlitePath: 'BENCH_SQLITE_PATH',
  postgresUrl: 'BENCH_POSTGRES_URL',
  postgresTable: 'BENCH_POSTGRES_TABLE',
} as const;

/** Messages between the bench and this process. */
export type OverheadWorkerMessage =
  { type: 'ready' } | { type: 'cpu'; user: number; system: number } | { type: 'stopped' };

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`overhead-worker: ${name} is not set.`);
  return value;
}

const io = z.object({ n: z.number() });

function noopTool(name: string, effect: 'read-only' | 'irreversible') {
  return defineTool({
    name,
    description: 'Does nothing; benchmark.',
    input: io,
    output: io,
    effect,
    // Measures the key store's overhead; a gated call would be refused without a recorded decision.
    approval: 'never',
    idempotent: true,
  }).implement(async ({ n }) => ({ n }));
}

function activitiesFor(name: string, effect: 'read-only' | 'irreversible', store?: IdempotencyStore) {
  return createToolActivities({
    registry: createToolRegistry([noopTool(name, effect)]),
    ...(store ? { idempotencyStore: store } : {}),
  });
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const sqlite = new SqliteIdempotencyStore({ path: env(OVERHEAD_WORKER_ENV.sqlitePath) });
  const table = env(OVERHEAD_WORKER_ENV.postgresTable);
  const postgres = new PostgresIdempotencyStore({ connectionString: env(OVERHEAD_WORKER_ENV.postgresUrl), table });
  const connection = await NativeConnection.connect({ address: env(OVERHEAD_WORKER_ENV.address) });
  const { describeTools: _a, ...readOnly } = activitiesFor(OVERHEAD_TOOL_NAMES.readOnly, 'read-only');
  const { describeTools: _b, ...noStore } = activitiesFor(OVERHEAD_TOOL_NAMES.effectsNoStore, 'irreversible');
  const { describeTools: _c, ...withSqlite } = activitiesFor(OVERHEAD_TOOL_NAMES.effectsSqlite, 'irreversible', sqlite);
  const { describeTools: _d, ...withPostgres } = activitiesFor(
    OVERHEAD_TOOL_NAMES.effectsPostgres,
    'irreversible',
    postgres,
  );
  const worker = await Worker.create({
    connection,
    namespace: env(OVERHEAD_WORKER_ENV.namespace),
    taskQueue: env(OVERHEAD_WORKER_ENV.taskQueue),
    workflowsPath: require.resolve('./overhead-workflows'),
    activities: { bareNoop: async (i: unknown) => i, ...readOnly, ...noStore, ...withSqlite, ...withPostgres },
  });
  process.on('message', (message: { type?: string }) => {
    if (message.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      send({ type: 'cpu', user, system });
    } else if (message.type === 'stop') {
      worker.shutdown();
    }
  });
  const running = worker.run();
  send({ type: 'ready' });
  try {
    await running;
  } finally {
    await connection.close();
    await sqlite.close();
    await postgres.close();
    const admin = new Pool({ connectionString: env(OVERHEAD_WORKER_ENV.postgresUrl), max: 1 });
    await admin.query(`DROP TABLE IF EXISTS "${table}"`).finally(() => admin.end());
    send({ type: 'stopped' });
  }
}

function send(message: OverheadWorkerMessage): void {
  process.send?.(message);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
