/**
 * `npm run bench:server`: what each dev-server setting buys. Starts one dev server per configuration (all
 * at once, so drift on a loaded machine hits them alike), then in interleaved rounds measures per
 * operation: a sequential bare activity, a sequential 1 ms timer, and a local activity. The configurations
 * go from the CLI's defaults to the project's tuned set, one setting at a time, plus the tuned set on a
 * SQLite file (what `npm run dev` and the demo use). Printed, never asserted.
 */
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevServer, TUNED_DEV_SERVER_CONFIG, type DevServer } from '../src/dev-server/dev-server';

const BENCH = {
  rounds: Number(process.env.BENCH_ROUNDS ?? 5),
  activitiesPerRound: 20,
  timersPerRound: 10,
  localPerRound: 20,
} as const;

type Config = Record<string, string | number | boolean>;

const T = TUNED_DEV_SERVER_CONFIG;
/** Each step adds one setting to the previous one. */
const CONFIGS: Array<{
  name: string;
  dynamicConfig: Config;
  dbFile?: boolean;
  tuned?: false;
  sqlitePragmas?: Record<string, string>;
}> = [
  { name: 'CLI defaults', dynamicConfig: {}, tuned: false },
  {
    name: '+ transferProcessorMaxPollRPS',
    dynamicConfig: { 'history.transferProcessorMaxPollRPS': T['history.transferProcessorMaxPollRPS'] },
    tuned: false,
  },
  {
    name: '+ timer poll rate, time shift',
    dynamicConfig: pick(T, [
      'history.transferProcessorMaxPollRPS',
      'history.timerProcessorMaxPollRPS',
      'history.timerProcessorMaxTimeShift',
    ]),
    tuned: false,
  },
  { name: 'tuned (all settings)', dynamicConfig: {} },
  {
    name: 'tuned + 1 task-queue partition',
    dynamicConfig: { 'matching.numTaskqueueReadPartitions': 1, 'matching.numTaskqueueWritePartitions': 1 },
  },
  { name: 'tuned, SQLite file, no pragmas', dynamicConfig: {}, dbFile: true, sqlitePragmas: {} },
  { name: 'tuned, SQLite file, WAL+NORMAL', dynamicConfig: {}, dbFile: true },
];

function pick(source: Config, keys: string[]): Config {
  return Object.fromEntries(keys.map((key) => [key, source[key]!]));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

interface Target {
  name: string;
  server: DevServer;
  client: Client;
  connection: Connection;
  nativeConnection: NativeConnection;
  worker: Worker;
  taskQueue: string;
  samples: { activity: number[]; timer: number[]; local: number[] };
}

async function startTarget(config: (typeof CONFIGS)[number], dir: string): Promise<Target> {
  const server = await startDevServer({
    ui: false,
    tuned: config.tuned ?? true,
    dynamicConfig: config.dynamicConfig,
    ...(config.dbFile ? { dbFile: join(dir, `${randomUUID()}.sqlite`) } : {}),
    ...(config.sqlitePragmas ? { sqlitePragmas: config.sqlitePragmas } : {}),
  });
  const connection = await Connection.connect({ address: server.address });
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const taskQueue = `bench-server-${randomUUID().slice(0, 8)}`;
  const worker = await Worker.create({
    connection: nativeConnection,
    namespace: server.namespace,
    taskQueue,
    workflowsPath: require.resolve('./server-tuning-workflows'),
    activities: { bareNoop: async (i: unknown) => i },
  });
  return {
    name: config.name,
    server,
    client: new Client({ connection, namespace: server.namespace }),
    connection,
    nativeConnection,
    worker,
    taskQueue,
    samples: { activity: [], timer: [], local: [] },
  };
}

async function timed(target: Target, type: string, args: unknown[], per: number): Promise<number> {
  const started = process.hrtime.bigint();
  await target.client.workflow.execute(type, {
    taskQueue: target.taskQueue,
    workflowId: `${type}-${randomUUID()}`,
    args,
  });
  return Number(process.hrtime.bigint() - started) / 1e6 / per;
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const dir = mkdtempSync(join(tmpdir(), 'durable-tools-bench-server-'));
  process.stderr.write(`starting ${CONFIGS.length} dev servers...\n`);
  const targets: Target[] = [];
  for (const config of CONFIGS) targets.push(await startTarget(config, dir));
  const runs = targets.map((t) => t.worker.run());
  const load: number[] = [];
  try {
    for (const t of targets) await timed(t, 'sequentialActivities', [5], 5); // warm-up
    for (let round = 0; round < BENCH.rounds; round++) {
      const order = round % 2 === 0 ? targets : [...targets].reverse();
      for (const t of order) {
        t.samples.activity.push(
          await timed(t, 'sequentialActivities', [BENCH.activitiesPerRound], BENCH.activitiesPerRound),
        );
        t.samples.timer.push(await timed(t, 'sequentialTimers', [BENCH.timersPerRound, 1], BENCH.timersPerRound));
        t.samples.local.push(await timed(t, 'sequentialLocalActivities', [BENCH.localPerRound], BENCH.localPerRound));
      }
      load.push(loadavg()[0]!);
      process.stderr.write(`round ${round + 1}/${BENCH.rounds} done (load ${loadavg()[0]!.toFixed(2)})\n`);
    }
  } finally {
    for (const t of targets) t.worker.shutdown();
    await Promise.allSettled(runs);
    for (const t of targets) {
      await t.connection.close();
      await t.nativeConnection.close();
      await t.server.stop();
    }
    rmSync(dir, { recursive: true, force: true });
  }

  const base = median(targets[0]!.samples.activity);
  console.log(`dev server configurations, ms per operation (median of ${BENCH.rounds} interleaved rounds)`);
  console.log(
    `${'configuration'.padEnd(32)} ${'activity'.padStart(9)} ${'1 ms timer'.padStart(11)} ${'local act.'.padStart(11)} ${'activity vs defaults'.padStart(21)}`,
  );
  for (const t of targets) {
    const a = median(t.samples.activity);
    console.log(
      `${t.name.padEnd(32)} ${a.toFixed(1).padStart(9)} ${median(t.samples.timer).toFixed(1).padStart(11)} ${median(t.samples.local).toFixed(1).padStart(11)} ${`x${(a / base).toFixed(2)}`.padStart(21)}`,
    );
  }
  const tuned = targets.find((t) => t.name.startsWith('tuned (all'))!;
  const file = targets.find((t) => t.name.includes('WAL+NORMAL'))!;
  console.log(`load average during the rounds: ${Math.min(...load).toFixed(2)}–${Math.max(...load).toFixed(2)}`);
  console.log(
    `dev server: activity ${median(tuned.samples.activity).toFixed(1)} ms tuned in memory, x${(median(tuned.samples.activity) / base).toFixed(2)} of defaults; SQLite file (WAL+NORMAL) x${(median(file.samples.activity) / median(tuned.samples.activity)).toFixed(2)} of in-memory`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
