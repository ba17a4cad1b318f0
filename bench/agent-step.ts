/**
 * `npm run bench:agent`: the time of one agent step (a model turn and its tool call) on the tuned dev server
 * vs the Temporal CLI's default dev server, with regular activities and on the fast path (local activities,
 * docs/fast-path.md). Starts both servers (in memory) and a worker on each (scripted model, a read-only tool
 * and a tool with effects through the SQLite key store, like `npm run worker`), then in interleaved rounds
 * runs a scripted agent run of `steps` steps on each, in each mode. Printed, never asserted.
 */
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AGENT_RUN_WORKFLOW } from '../src/client/agent-run-client';
import { startDevServer, type DevServer } from '../src/dev-server/dev-server';
import { SqliteIdempotencyStore } from '../src/stores/idempotency/sqlite-idempotency-store';
import { createWorker } from '../src/runtime/create-worker';
import type { AgentRunResult } from '../src/contract/agent-run-types';
import { agentBenchRun, AGENT_BENCH_TOOLS } from './agent-bench-tools';
import { LoadSampler, machineLine, median } from './bench-report';
import { engineBundleOptions } from '../src/runtime/engine-bundle-options';

const BENCH = {
  rounds: Number(process.env.BENCH_ROUNDS ?? 3),
  steps: 50,
  /** The SQLite key store's `synchronous` mode (`BENCH_SQLITE_SYNCHRONOUS=NORMAL`; default FULL). */
  synchronous: process.env.BENCH_SQLITE_SYNCHRONOUS === 'NORMAL' ? 'NORMAL' : 'FULL',
} as const;

interface Target {
  name: 'tuned' | 'default';
  server: DevServer;
  connection: Connection;
  nativeConnection: NativeConnection;
  client: Client;
  worker: Worker;
  store: SqliteIdempotencyStore;
  taskQueue: string;
  msPerStep: number[];
  fastMsPerStep: number[];
}

async function startTarget(name: Target['name'], code: string, dir: string): Promise<Target> {
  const server = await startDevServer({ ui: false, tuned: name === 'tuned' });
  const connection = await Connection.connect({ address: server.address });
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const taskQueue = `bench-agent-${randomUUID().slice(0, 8)}`;
  const store = new SqliteIdempotencyStore({ path: join(dir, `${name}.sqlite`), synchronous: BENCH.synchronous });
  const { worker } = await createWorker({
    // Stores not given here stay in memory (durable ones are the default).
    stores: 'memory',
    tools: AGENT_BENCH_TOOLS,
    connection: nativeConnection,
    settings: { namespace: server.namespace, taskQueue },
    workflowBundle: { code },
    idempotencyStore: store,
  });
  return {
    name,
    server,
    connection,
    nativeConnection,
    client: new Client({ connection, namespace: server.namespace }),
    worker,
    store,
    taskQueue,
    msPerStep: [],
    fastMsPerStep: [],
  };
}

async function runOnce(target: Target, steps: number, fastPath = false): Promise<number> {
  const t0 = performance.now();
  const result = (await target.client.workflow.execute(AGENT_RUN_WORKFLOW, {
    taskQueue: target.taskQueue,
    workflowId: `bench-agent-${target.name}-${randomUUID()}`,
    args: [agentBenchRun(steps, { fastPath })],
  })) as AgentRunResult;
  if (result.status !== 'completed' || result.stepCount !== steps) {
    throw new Error(
      `A ${steps}-step run on the ${target.name} server ended ${result.status} after ${result.stepCount} steps.`,
    );
  }
  return (performance.now() - t0) / steps;
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const dir = mkdtempSync(join(tmpdir(), 'durable-tools-bench-agent-'));
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../src/workflows'),
    ...engineBundleOptions(),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } as never,
  });
  const targets = [await startTarget('tuned', code, dir), await startTarget('default', code, dir)];
  const runs = targets.map((t) => t.worker.run());
  const load = new LoadSampler();
  try {
    for (const t of targets) await runOnce(t, 4); // warm-up
    for (const t of targets) await runOnce(t, 4, true);
    for (let round = 0; round < BENCH.rounds; round++) {
      const order = round % 2 === 0 ? targets : [...targets].reverse();
      for (const t of order) {
        const fastFirst = round % 2 === 1;
        if (fastFirst) t.fastMsPerStep.push(await runOnce(t, BENCH.steps, true));
        t.msPerStep.push(await runOnce(t, BENCH.steps));
        if (!fastFirst) t.fastMsPerStep.push(await runOnce(t, BENCH.steps, true));
      }
      process.stderr.write(`round ${round + 1}/${BENCH.rounds} done (load ${load.sample().toFixed(1)})\n`);
    }
  } finally {
    for (const t of targets) t.worker.shutdown();
    await Promise.allSettled(runs);
    for (const t of targets) {
      await t.store.close();
      await t.connection.close();
      await t.nativeConnection.close();
      await t.server.stop();
    }
    rmSync(dir, { recursive: true, force: true });
  }
  const [tuned, standard] = targets.map((t) => median(t.msPerStep)) as [number, number];
  const [tunedFast, standardFast] = targets.map((t) => median(t.fastMsPerStep)) as [number, number];
  const rounds = (values: number[]) => values.map((v) => v.toFixed(1)).join(', ');
  console.log(`${BENCH.steps}-step scripted agent runs, ${BENCH.rounds} interleaved rounds, ms per step (median)`);
  console.log(`tuned dev server               ${tuned.toFixed(1)} ms  (rounds: ${rounds(targets[0]!.msPerStep)})`);
  console.log(
    `tuned dev server, fast path    ${tunedFast.toFixed(1)} ms  (rounds: ${rounds(targets[0]!.fastMsPerStep)})`,
  );
  console.log(`default dev server             ${standard.toFixed(1)} ms  (rounds: ${rounds(targets[1]!.msPerStep)})`);
  console.log(
    `default dev server, fast path  ${standardFast.toFixed(1)} ms  (rounds: ${rounds(targets[1]!.fastMsPerStep)})`,
  );
  console.log(`machine: ${machineLine()}; load average during the rounds ${load.range()}`);
  console.log(
    `agent step: ${tuned.toFixed(1)} ms tuned, x${(tuned / standard).toFixed(2)} of default; ` +
      `fast path ${tunedFast.toFixed(1)} ms, x${(tunedFast / tuned).toFixed(2)} of regular`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
