/**
 * `npm run bench:profile`: the worker CPU of one agent step, and where it goes. Starts a tuned in-memory dev
 * server and one worker in this process (SQLite key store, scripted model, the bench tools of
 * `bench:agent`), with workflows in the main thread (`debugMode`) so one profile sees all of the worker's
 * JavaScript; warms up, then runs `BENCH_STEPS` steps in runs of 50 (regular activities, or the fast path
 * with `BENCH_FAST_PATH=1`) under the V8 profiler. Prints CPU ms per step (the whole process: JavaScript,
 * Temporal's core threads, SQLite), the hottest functions and packages, and writes the profile to
 * `BENCH_PROFILE` (default a temporary file) for Chrome DevTools. Printed, never asserted.
 */
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session, type Profiler } from 'node:inspector';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AGENT_RUN_WORKFLOW } from '../src/client/agent-run-client';
import type { AgentRunResult } from '../src/contract/agent-run-types';
import type { FastPathOptions, FastPathSetting } from '../src/contract/fast-path';
import { startDevServer } from '../src/dev-server/dev-server';
import { createWorker } from '../src/runtime/create-worker';
import { SqliteIdempotencyStore } from '../src/stores/idempotency/sqlite-idempotency-store';
import { agentBenchRun, AGENT_BENCH_TOOLS } from './agent-bench-tools';
import { machineLine } from './bench-report';
import { engineBundleOptions } from '../src/runtime/engine-bundle-options';

const BENCH = {
  steps: Number(process.env.BENCH_STEPS ?? 400),
  /** `1` for the fast path's defaults, or its options as JSON (`{"maxLocalCallsPerTask":10}`). */
  fastPath: fastPathSetting(process.env.BENCH_FAST_PATH),
  stepsPerRun: 50,
  /** The SQLite key store's `synchronous` mode (`BENCH_SQLITE_SYNCHRONOUS=NORMAL`; default FULL). */
  synchronous: process.env.BENCH_SQLITE_SYNCHRONOUS === 'NORMAL' ? 'NORMAL' : 'FULL',
  top: 25,
} as const;

function fastPathSetting(value: string | undefined): FastPathSetting {
  if (value === undefined || value === '' || value === '0') return false;
  return value.startsWith('{') ? (JSON.parse(value) as FastPathOptions) : true;
}

function post<T>(session: Session, method: string): Promise<T> {
  return new Promise((resolve, reject) =>
    session.post(method, (error, result) => (error ? reject(error) : resolve(result as T))),
  );
}

/** Self time by function and by package or source file, in per cent of the profile's busy time. */
function hottest(profile: Profiler.Profile): { functions: [string, number][]; files: [string, number][] } {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  let busy = 0;
  profile.samples!.forEach((id, i) => {
    const { callFrame } = nodes.get(id)!;
    if (callFrame.functionName === '(idle)') return;
    const dt = profile.timeDeltas![i] ?? 0;
    busy += dt;
    const url = callFrame.url.replace(/.*node_modules\//, '').replace(/.*\/(src|bench)\//, '$1/');
    const file =
      url.startsWith('src/') || url.startsWith('bench/') ? url : (url.match(/^(@[^/]+\/[^/]+|[^/]+)/)?.[1] ?? '');
    const fn = `${callFrame.functionName || '(anonymous)'} ${url}:${callFrame.lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + dt);
    byFile.set(file || `(${callFrame.functionName})`, (byFile.get(file || `(${callFrame.functionName})`) ?? 0) + dt);
  });
  const share = (entries: Map<string, number>) =>
    [...entries]
      .sort((a, b) => b[1] - a[1])
      .slice(0, BENCH.top)
      .map(([name, t]): [string, number] => [name, (100 * t) / busy]);
  return { functions: share(byFunction), files: share(byFile) };
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const dir = mkdtempSync(join(tmpdir(), 'durable-tools-bench-profile-'));
  const server = await startDevServer({ ui: false, tuned: true });
  const connection = await Connection.connect({ address: server.address });
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const client = new Client({ connection, namespace: server.namespace });
  const taskQueue = `bench-profile-${randomUUID().slice(0, 8)}`;
  const store = new SqliteIdempotencyStore({ path: join(dir, 'keys.sqlite'), synchronous: BENCH.synchronous });
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../src/workflows'),
    ...engineBundleOptions(),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } as never,
  });
  const { worker } = await createWorker({
    // Stores not given here stay in memory (durable ones are the default).
    stores: 'memory',
    tools: AGENT_BENCH_TOOLS,
    connection: nativeConnection,
    settings: { namespace: server.namespace, taskQueue },
    workflowBundle: { code },
    idempotencyStore: store,
    workerOptions: { debugMode: true },
  });
  const running = worker.run();
  const runOnce = async (steps: number) => {
    const result = (await client.workflow.execute(AGENT_RUN_WORKFLOW, {
      taskQueue,
      workflowId: `bench-profile-${randomUUID()}`,
      args: [agentBenchRun(steps, { fastPath: BENCH.fastPath })],
    })) as AgentRunResult;
    if (result.status !== 'completed' || result.stepCount !== steps) throw new Error(`A run ended ${result.status}.`);
  };
  const session = new Session();
  session.connect();
  try {
    for (let i = 0; i < 3; i++) await runOnce(10); // warm-up: the bundle, the JIT, the stores
    await post(session, 'Profiler.enable');
    await post(session, 'Profiler.start');
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let done = 0; done < BENCH.steps; done += BENCH.stepsPerRun) await runOnce(BENCH.stepsPerRun);
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const { profile } = await post<{ profile: Profiler.Profile }>(session, 'Profiler.stop');
    const path = process.env.BENCH_PROFILE ?? join(tmpdir(), `durable-tools-step-${Date.now()}.cpuprofile`);
    writeFileSync(path, JSON.stringify(profile));
    const { functions, files } = hottest(profile);
    console.log(`hottest functions (self time, % of busy JavaScript time):`);
    for (const [name, pct] of functions) console.log(`  ${pct.toFixed(1).padStart(5)}%  ${name}`);
    console.log(`by package or source file:`);
    for (const [name, pct] of files) console.log(`  ${pct.toFixed(1).padStart(5)}%  ${name}`);
    console.log(`profile: ${path}`);
    console.log(`machine: ${machineLine()}`);
    console.log(
      `step profile (${BENCH.fastPath ? `fast path ${JSON.stringify(BENCH.fastPath)}` : 'regular activities'}, SQLite synchronous=${BENCH.synchronous}): ${((cpu.user + cpu.system) / 1000 / BENCH.steps).toFixed(1)} ms worker CPU per step ` +
        `(user ${(cpu.user / 1000 / BENCH.steps).toFixed(1)}, system ${(cpu.system / 1000 / BENCH.steps).toFixed(1)}), ${(ms / BENCH.steps).toFixed(1)} ms per step`,
    );
  } finally {
    session.disconnect();
    worker.shutdown();
    await running;
    await store.close();
    await connection.close();
    await nativeConnection.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
