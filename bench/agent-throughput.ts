/**
 * `npm run bench:throughput`: agent steps per second with many runs at once, with 1 and with 3 worker
 * processes on one task queue (Postgres idempotency and transcript stores shared by all workers, the
 * default worker tuning of `createWorker`), on TEMPORAL_ADDRESS or a tuned dev server the bench starts.
 * Each measurement starts `runs` scripted agent runs of `steps` steps at once and waits for all of them,
 * with regular activities and on the fast path (`fastPath: true`, docs/fast-path.md), in interleaved rounds.
 * Printed, never asserted. The last lines give the rates and their ratios (scale-out, fast path vs regular).
 *
 * `npm run bench:throughput -- --topology cluster`: the same with 1 and 2 worker HOSTS (network namespaces, each one
 * worker process, test/support/netns-network.ts) on a Temporal cluster (frontend, history, matching and worker services
 * on PostgreSQL, test/support/temporal-cluster.ts) bound to the network's Temporal address; the hosts reach PostgreSQL
 * through a relay on the network's services address. Needs root (ip netns).
 */
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { AGENT_RUN_WORKFLOW } from '../src/client/agent-run-client';
import type { AgentRunResult } from '../src/contract/agent-run-types';
import { tunedWorkerOptions } from '../src/runtime/worker-tuning';
import { agentBenchRun } from './agent-bench-tools';
import { benchTemporal } from './bench-temporal';
import { LoadSampler, machineLine, median } from './bench-report';
import { startChildWorker, type ChildWorker, type SpawnWorker } from './child-worker';
import { NetnsNetwork, probeNetnsSupport } from '../test/support/netns-network';
import { startTcpRelay } from '../test/support/netns-relay';
import { startNetnsTemporal } from '../test/support/netns-temporal';
import { THROUGHPUT_WORKER_ENV } from './throughput-worker';
import { engineBundleOptions } from '../src/runtime/engine-bundle-options';

const CLUSTER_TOPOLOGY = topologyFromArgs(process.argv.slice(2)) === 'cluster';

const BENCH = {
  runs: Number(process.env.BENCH_RUNS ?? 200),
  steps: 10,
  /** Worker processes (on the cluster topology: worker hosts, one process each). */
  workerCounts: CLUSTER_TOPOLOGY ? [1, 2] : [1, 3],
  rounds: Number(process.env.BENCH_ROUNDS ?? 1),
  modes: ['regular', 'fast path'] as const,
} as const;

type Mode = (typeof BENCH.modes)[number];
const series = (workerCount: number, mode: Mode) => `${workerCount}/${mode}`;

const POSTGRES_URL = process.env.DURABLE_TOOLS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

function topologyFromArgs(args: readonly string[]): 'single' | 'cluster' {
  const i = args.findIndex((arg) => arg === '--topology' || arg.startsWith('--topology='));
  if (i < 0) return 'single';
  const value = args[i]!.includes('=') ? args[i]!.split('=')[1] : args[i + 1];
  if (value !== 'single' && value !== 'cluster')
    throw new Error(`--topology must be single or cluster; got "${value}".`);
  return value;
}

/** Where the workers run and what they connect to: this machine, or worker hosts of a netns network. */
interface BenchTopology {
  /** Temporal address and PostgreSQL URL as the workers reach them. */
  workerTemporalAddress: string;
  workerPostgresUrl: string;
  /** How worker `i` (0-based) is started. */
  spawnFor(i: number): SpawnWorker | undefined;
  describe: string;
  close(): Promise<void>;
}

/** The cluster topology: a netns network, a Temporal cluster on its Temporal address, a PostgreSQL relay. */
async function clusterTopology(
  dir: string,
): Promise<{ topology: BenchTopology; temporal: Awaited<ReturnType<typeof benchTemporal>> }> {
  const support = probeNetnsSupport();
  if (!support.ok) throw new Error(`--topology cluster needs network namespaces: ${support.reason}`);
  const network = NetnsNetwork.create();
  try {
    const server = await startNetnsTemporal(network, 'cluster', dir, (line) => process.stderr.write(`${line}\n`));
    const pgRelay = await startTcpRelay({ host: network.servicesHost, port: 0 }, { host: '127.0.0.1', port: 5432 });
    Runtime.install({ logger: new DefaultLogger('ERROR') });
    const connection = await Connection.connect({ address: server.clientAddress });
    const nativeConnection = await NativeConnection.connect({ address: server.clientAddress });
    const temporal = {
      client: new Client({ connection, namespace: server.namespace }),
      nativeConnection,
      address: server.hostAddress,
      namespace: server.namespace,
      startedServer: true,
      close: async () => {
        await connection.close();
        await nativeConnection.close();
        await pgRelay.close();
        await server.stop();
        network.destroy();
      },
    };
    const topology: BenchTopology = {
      workerTemporalAddress: server.hostAddress,
      workerPostgresUrl: `postgres://postgres@${pgRelay.address}/test`,
      spawnFor: (i) => {
        while (network.hosts.length <= i) network.addHost();
        return network.hosts[i]!.spawn;
      },
      describe: `worker hosts in network namespaces (one worker process each) on a Temporal cluster at ${server.hostAddress} (frontend, history, matching, worker services on PostgreSQL)`,
      close: () => temporal.close(),
    };
    return { topology, temporal };
  } catch (error) {
    network.destroy();
    throw error;
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'durable-tools-bench-throughput-'));
  const cluster = CLUSTER_TOPOLOGY ? await clusterTopology(dir) : undefined;
  const temporal = cluster?.temporal ?? (await benchTemporal());
  const topology: BenchTopology = cluster?.topology ?? {
    workerTemporalAddress: temporal.address,
    workerPostgresUrl: POSTGRES_URL,
    spawnFor: () => undefined,
    describe: temporal.startedServer
      ? 'a tuned in-memory dev server started by the bench'
      : `the server at ${temporal.address}`,
    close: () => temporal.close(),
  };
  const suffix = `${process.pid}_${Date.now().toString(36)}`;
  const tables = { keys: `bench_tp_keys_${suffix}`, transcripts: `bench_tp_transcripts_${suffix}` };
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../src/workflows'),
    ...engineBundleOptions(),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } as never,
  });
  const bundlePath = join(dir, 'workflow-bundle.js');
  writeFileSync(bundlePath, code);
  const keys = BENCH.workerCounts.flatMap((n) => BENCH.modes.map((mode) => series(n, mode)));
  const stepsPerSecond = new Map<string, number[]>(keys.map((key) => [key, []]));
  const cpuPerStep = new Map<string, number[]>(keys.map((key) => [key, []]));
  const load = new LoadSampler();

  const measure = async (workerCount: number, modes: readonly Mode[]): Promise<void> => {
    const taskQueue = `bench-throughput-${randomUUID().slice(0, 8)}`;
    const workers: ChildWorker[] = [];
    try {
      for (let i = 0; i < workerCount; i++) {
        workers.push(
          await startChildWorker(
            require.resolve('./throughput-worker'),
            {
              [THROUGHPUT_WORKER_ENV.address]: topology.workerTemporalAddress,
              [THROUGHPUT_WORKER_ENV.namespace]: temporal.namespace,
              [THROUGHPUT_WORKER_ENV.taskQueue]: taskQueue,
              [THROUGHPUT_WORKER_ENV.bundlePath]: bundlePath,
              [THROUGHPUT_WORKER_ENV.postgresUrl]: topology.workerPostgresUrl,
              [THROUGHPUT_WORKER_ENV.keysTable]: tables.keys,
              [THROUGHPUT_WORKER_ENV.transcriptsTable]: tables.transcripts,
            },
            topology.spawnFor(i),
          ),
        );
      }
      for (const mode of modes) {
        const cpu0 = await Promise.all(workers.map((w) => w.cpuMs()));
        const t0 = performance.now();
        const handles = await Promise.all(
          Array.from({ length: BENCH.runs }, () =>
            temporal.client.workflow.start(AGENT_RUN_WORKFLOW, {
              taskQueue,
              workflowId: `bench-throughput-${randomUUID()}`,
              args: [agentBenchRun(BENCH.steps, { fastPath: mode === 'fast path' })],
            }),
          ),
        );
        // Every result is awaited before anything is thrown: the connection closes after a throw, and a result still
        // polling on it would then fail from a retry timer ("Channel has been shut down") and hide the cause.
        const settled = await Promise.allSettled(handles.map((h) => h.result() as Promise<AgentRunResult>));
        const rejected = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
        if (rejected.length > 0) {
          throw new Error(`${rejected.length} runs failed; the first: ${String(rejected[0]!.reason)}`, {
            cause: rejected[0]!.reason,
          });
        }
        const results = settled.map((s) => (s as PromiseFulfilledResult<AgentRunResult>).value);
        const seconds = (performance.now() - t0) / 1000;
        const cpu1 = await Promise.all(workers.map((w) => w.cpuMs()));
        const failed = results.filter((r) => r.status !== 'completed' || r.stepCount !== BENCH.steps);
        if (failed.length > 0) throw new Error(`${failed.length} runs did not complete their ${BENCH.steps} steps.`);
        const steps = BENCH.runs * BENCH.steps;
        const cpuMs = cpu1.reduce((sum, v, i) => sum + v - cpu0[i]!, 0);
        stepsPerSecond.get(series(workerCount, mode))!.push(steps / seconds);
        cpuPerStep.get(series(workerCount, mode))!.push(cpuMs / steps);
        process.stderr.write(
          `${workerCount} worker(s), ${mode}: ${steps} steps in ${seconds.toFixed(1)} s (load ${load.sample().toFixed(1)})\n`,
        );
      }
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
  };

  try {
    for (let round = 0; round < BENCH.rounds; round++) {
      const order = round % 2 === 0 ? BENCH.workerCounts : [...BENCH.workerCounts].reverse();
      // Both modes on the same workers, in alternating order: the ratio is what a round compares.
      const modes = round % 2 === 0 ? BENCH.modes : [...BENCH.modes].reverse();
      for (const n of order) await measure(n, modes);
    }
  } finally {
    await topology.close();
    const admin = new Pool({ connectionString: POSTGRES_URL, max: 1 });
    // The transcript store keeps large messages in a `<table>_payloads` table beside its own.
    for (const table of [...Object.values(tables), `${tables.transcripts}_payloads`])
      await admin.query(`DROP TABLE IF EXISTS "${table}"`).catch(() => undefined);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }

  const rate = (n: number, mode: Mode) => median(stepsPerSecond.get(series(n, mode))!);
  const [one, three] = BENCH.workerCounts.map((n) => rate(n, 'regular')) as [number, number];
  const [oneFast, threeFast] = BENCH.workerCounts.map((n) => rate(n, 'fast path')) as [number, number];
  const many = BENCH.workerCounts[1]!;
  const tuning = tunedWorkerOptions();
  console.log(
    `${BENCH.runs} concurrent agent runs × ${BENCH.steps} steps (model turn + tool call; half the tools through the Postgres key store), ` +
      `${BENCH.rounds} round(s), on ${topology.describe}`,
  );
  console.log(
    `worker settings: maxCachedWorkflows ${tuning.maxCachedWorkflows}, workflow tasks ${tuning.maxConcurrentWorkflowTaskExecutions}, activities ${tuning.maxConcurrentActivityTaskExecutions}, local activities ${tuning.maxConcurrentLocalActivityExecutions}`,
  );
  for (const n of BENCH.workerCounts) {
    for (const mode of BENCH.modes) {
      const key = series(n, mode);
      console.log(
        `${n} worker process(es), ${mode}: ${median(stepsPerSecond.get(key)!).toFixed(1)} steps/s ` +
          `(rounds: ${stepsPerSecond
            .get(key)!
            .map((v) => v.toFixed(1))
            .join(', ')}), worker CPU ${median(cpuPerStep.get(key)!).toFixed(1)} ms per step`,
      );
    }
  }
  console.log(`machine: ${machineLine()}; load average during the runs ${load.range()}`);
  console.log(
    `throughput: ${one.toFixed(1)} steps/s with 1 worker, ${three.toFixed(1)} steps/s with ${many} workers, scaling x${(three / one).toFixed(2)}; ` +
      `fast path ${oneFast.toFixed(1)} / ${threeFast.toFixed(1)} steps/s, x${(oneFast / one).toFixed(2)} / x${(threeFast / three).toFixed(2)} of regular`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
