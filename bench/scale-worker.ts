/**
 * The worker process of `npm run bench:scale` (its RSS and CPU are the bench's figures, so it runs alone in
 * its process; the bench's client and ledger live in the parent). `engine`: `createWorker` with its defaults
 * (durable SQLite stores in the scratch directory's `.data/`), the simulated model (bench/scale-model.ts) and
 * two tools with effects, `ledger_step` and `ledger_approved` (the same, with `approval: 'always'`). `plain`: a
 * Temporal worker running the floor (`plainAgentRun`) with the same slot and cache sizes as the engine's worker.
 * Both export the SDK's metrics on a Prometheus endpoint (`metricsPort`), read by the parent for the sticky
 * cache's hits and misses. Sends `ready` over IPC once it polls, answers `memory` with its memory after a GC;
 * exits when the parent disconnects.
 */
import { DefaultLogger, makeTelemetryFilterString, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { z } from 'zod';
import type { ModelProvider } from '../src/contract/model-types';
import { scriptedModel } from '../src/model/scripted-model';
import { createWorker } from '../src/runtime/create-worker';
import { tunedWorkerOptions } from '../src/runtime/worker-tuning';
import { SqliteIdempotencyStore } from '../src/stores/idempotency/sqlite-idempotency-store';
import { defineTool } from '../src/tools/define-tool';
import { ledgerStepTool } from './peers/durable-tools-service';
import { postEffect } from './peers/peer-ledger';
import { plainTemporalActivities } from './peers/temporal-activities';
import { simulatedModelMs } from './scale-model';

/** What the parent passes in `SCALE_WORKER_CONFIG` (JSON). */
export interface ScaleWorkerConfig {
  system: 'engine' | 'plain';
  address: string;
  namespace: string;
  taskQueue: string;
  ledgerUrl: string;
  seed: number;
  metricsPort: number;
  /** Scratch directory: the engine's `.data/` goes here. */
  dir: string;
  /** `--slots N`: workflow task, activity and local activity slots instead of `tunedWorkerOptions()`'s. */
  slots?: number;
  /** The engine's SQLite key store with its fsync inside the commit, on the event loop (`syncOffEventLoop: false`). */
  fsyncInCommit?: boolean;
}

/** The worker options of `--slots N`, or none. */
function slotOptions(config: ScaleWorkerConfig) {
  if (config.slots === undefined) return {};
  return {
    maxConcurrentWorkflowTaskExecutions: config.slots,
    maxConcurrentActivityTaskExecutions: config.slots,
    maxConcurrentLocalActivityExecutions: config.slots,
  };
}

/** The environment variable carrying {@link ScaleWorkerConfig}. */
export const SCALE_WORKER_ENV = 'SCALE_WORKER_CONFIG';

/** The simulated model: sleeps the drawn latency of the turn, then plays the run's script. */
function simulatedModel(seed: number): ModelProvider {
  return async (request, { signal }) => {
    const ms = simulatedModelMs(seed, request.goal, request.turn + 1);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
    });
    return scriptedModel(request);
  };
}

/** `ledger_step` with `approval: 'always'`: the call of the approval phase, parked until someone decides. */
function ledgerApprovedTool(ledgerUrl: string) {
  return defineTool({
    name: 'ledger_approved',
    description: 'Records one step at the benchmark ledger, once a person approved it.',
    input: z.object({ n: z.number().int() }),
    output: z.object({ recorded: z.boolean() }),
    effect: 'irreversible',
    idempotent: false,
    approval: 'always',
  }).implement(async (_input, ctx) => {
    await postEffect(ledgerUrl, ctx.idempotencyKey);
    return { recorded: true };
  });
}

async function engineWorker(config: ScaleWorkerConfig, connection: NativeConnection): Promise<Worker> {
  const { worker } = await createWorker({
    tools: [ledgerStepTool(config.ledgerUrl), ledgerApprovedTool(config.ledgerUrl)],
    connection,
    settings: { namespace: config.namespace, taskQueue: config.taskQueue },
    modelProviders: { simulated: simulatedModel(config.seed) },
    workerOptions: slotOptions(config),
    ...(config.fsyncInCommit
      ? { idempotencyStore: new SqliteIdempotencyStore({ path: '.data/idempotency.sqlite', syncOffEventLoop: false }) }
      : {}),
  });
  return worker;
}

async function plainWorker(config: ScaleWorkerConfig, connection: NativeConnection): Promise<Worker> {
  const { isolateExecutionTimeout: _deadlock, ...sizes } = tunedWorkerOptions();
  return Worker.create({
    connection,
    namespace: config.namespace,
    taskQueue: config.taskQueue,
    workflowsPath: require.resolve('./peers/temporal-workflows'),
    activities: plainTemporalActivities(config.ledgerUrl, config.seed),
    ...sizes,
    ...slotOptions(config),
  });
}

async function main(): Promise<void> {
  const config = JSON.parse(process.env[SCALE_WORKER_ENV] ?? '') as ScaleWorkerConfig;
  // The engine's default stores go to `.data/` of the scratch directory. The floor stays where it is: its worker
  // bundles its workflows at start, and the workflow thread resolves `--import tsx` from the working directory.
  if (config.system === 'engine') process.chdir(config.dir);
  const level = (process.env.SCALE_LOG_LEVEL as 'WARN' | undefined) ?? 'ERROR';
  Runtime.install({
    logger: new DefaultLogger(level),
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: level }), forward: {} },
      metrics: { prometheus: { bindAddress: `127.0.0.1:${config.metricsPort}` } },
    },
  });
  const connection = await NativeConnection.connect({ address: config.address });
  const worker = await (config.system === 'engine' ? engineWorker : plainWorker)(config, connection);
  const running = worker.run();
  process.send?.({ type: 'ready' });
  // The parent's memory readings (bench/scale-worker-process.ts): after a full GC of this thread (`--expose-gc`).
  process.on('message', (message: { type?: string; snapshotDir?: string }) => {
    if (message.type !== 'memory') return;
    (globalThis as { gc?: () => void }).gc?.();
    // SCALE_HEAP_SNAPSHOTS=<dir> (the parent passes it): a heap snapshot of this thread after each batch, to diff.
    if (message.snapshotDir)
      writeHeapSnapshot(join(message.snapshotDir, `worker-${process.pid}-${Date.now()}.heapsnapshot`));
    const usage = process.memoryUsage();
    process.send?.({
      type: 'memory',
      rssKb: Math.round(usage.rss / 1024),
      heapUsedKb: Math.round(usage.heapUsed / 1024),
      externalKb: Math.round(usage.external / 1024),
    });
  });
  // The SDK also shuts the worker down on SIGINT/SIGTERM: shut down once.
  process.on('disconnect', () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
  });
  await running;
  await connection.close();
  process.exit(0);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
