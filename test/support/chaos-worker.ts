/**
 * A worker process for the chaos tests, run as `node --import tsx test/support/chaos-worker.ts` so that
 * its pid is the node process that runs the worker (a SIGKILL of it kills the worker, not a wrapper).
 * It runs until killed. Its stores are files shared by every worker generation: the idempotency keys and
 * the transcripts survive the SIGKILL, which is the point.
 *
 * Environment: see {@link CHAOS_WORKER_ENV}. Prints {@link CHAOS_WORKER_READY} on stdout once polling.
 */
import type { Duration } from '@temporalio/common';
import { DefaultLogger, Runtime, type Worker } from '@temporalio/worker';
import { SqliteIdempotencyStore } from '../../src/stores/idempotency/sqlite-idempotency-store';
import { SqliteTranscriptStore } from '../../src/stores/transcripts/sqlite-transcript-store';
import { createWorker, type CreateWorkerOptions } from '../../src/runtime/create-worker';
import { installActivationPausePoint } from './chaos-activation-pause';
import { createChaosTools, type ChaosPauseMoment, type ChaosToolOptions } from './chaos-tools';

/** Environment variables the chaos worker reads. */
export const CHAOS_WORKER_ENV = {
  address: 'DT_CHAOS_ADDRESS',
  namespace: 'DT_CHAOS_NAMESPACE',
  taskQueue: 'DT_CHAOS_TASK_QUEUE',
  bundlePath: 'DT_CHAOS_WORKFLOW_BUNDLE',
  ledgerUrl: 'DT_CHAOS_LEDGER_URL',
  keysPath: 'DT_CHAOS_KEYS_DB',
  transcriptsPath: 'DT_CHAOS_TRANSCRIPTS_DB',
  leaseMs: 'DT_CHAOS_LEASE_MS',
  thinkMs: 'DT_CHAOS_THINK_MS',
  /** `1`: the harness may arm a pause moment over IPC (`{ arm: moment | null }`); the worker then stops itself there. */
  pausePoints: 'DT_CHAOS_PAUSE_POINTS',
  /**
   * Overrides the worker's `isolateExecutionTimeout` (the workflow deadlock detector), e.g. `5s`, the SDK's
   * default, to reproduce the worker deaths after a pause that docs/pauses.md describes. Passed on from the
   * harness's own environment.
   */
  isolateExecutionTimeout: 'DT_CHAOS_ISOLATE_EXECUTION_TIMEOUT',
} as const;

/** An IPC message from the harness: stop at the next call reaching `arm` (null disarms). */
export interface ChaosPauseCommand {
  arm: ChaosPauseMoment | null;
  /** Only a call of this tool stops there (any tool when absent; not for `in-activation`). */
  tool?: string;
}

/** The line the worker prints when it starts polling. */
export const CHAOS_WORKER_READY = 'chaos-worker ready';

/**
 * Defaults of the chaos worker: a lease well below the tools' 3 s timeout, and a short sticky-queue
 * timeout (Temporal's default is 10 s), so the workflow tasks a killed worker held move to the next
 * worker sooner; the new worker then replays those histories from scratch, which the test wants anyway.
 */
export const CHAOS_WORKER_DEFAULTS = {
  leaseMs: 1500,
  thinkMs: 100,
  stickyQueueScheduleToStartTimeout: '3 seconds',
} as const;

/** The value of the environment variable `name`; `<who>: <name> is not set.` when it is empty. */
export function requiredEnv(who: string, name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${who}: ${name} is not set.`);
  return value;
}

/** What a chaos worker process (this one, or a worker host's: netns-worker.ts) gives {@link createChaosWorker}. */
export interface ChaosWorkerSetup {
  /** The process, for the messages: `chaos-worker`. */
  who: string;
  /** The names of the variables holding the server, the task queue, the bundle's path and the ledger's URL. */
  env: { address: string; namespace: string; taskQueue: string; bundlePath: string; ledgerUrl: string };
  idempotencyStore: NonNullable<CreateWorkerOptions['idempotencyStore']>;
  transcripts: NonNullable<CreateWorkerOptions['transcripts']>;
  thinkMs: number;
  leaseMs: number;
  pausePoint?: ChaosToolOptions['pausePoint'];
  isolateExecutionTimeout?: Duration;
}

/**
 * The worker of a chaos worker process: the chaos tools writing to the ledger, the harness's workflow bundle, the
 * given key and transcript stores, and {@link CHAOS_WORKER_DEFAULTS}' short sticky-queue timeout.
 */
export async function createChaosWorker(setup: ChaosWorkerSetup): Promise<Worker> {
  const required = (name: string) => requiredEnv(setup.who, name);
  const { worker } = await createWorker({
    // Stores not given here stay in memory (durable ones are the default).
    stores: 'memory',
    tools: createChaosTools({
      ledgerUrl: required(setup.env.ledgerUrl),
      thinkMs: setup.thinkMs,
      ...(setup.pausePoint ? { pausePoint: setup.pausePoint } : {}),
    }),
    settings: {
      address: required(setup.env.address),
      namespace: process.env[setup.env.namespace] ?? 'default',
      taskQueue: required(setup.env.taskQueue),
    },
    workflowBundle: { codePath: required(setup.env.bundlePath) },
    idempotencyStore: setup.idempotencyStore,
    leaseMs: setup.leaseMs,
    transcripts: setup.transcripts,
    workerOptions: {
      stickyQueueScheduleToStartTimeout: CHAOS_WORKER_DEFAULTS.stickyQueueScheduleToStartTimeout,
      ...(setup.isolateExecutionTimeout ? { isolateExecutionTimeout: setup.isolateExecutionTimeout } : {}),
    },
  });
  return worker;
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const env = CHAOS_WORKER_ENV;
  const idempotencyStore = new SqliteIdempotencyStore({ path: requiredEnv('chaos-worker', env.keysPath) });
  const transcripts = new SqliteTranscriptStore({ path: requiredEnv('chaos-worker', env.transcriptsPath) });
  let armed: ChaosPauseMoment | null = null;
  let armedTool: string | undefined;
  const pausePoints = process.env[env.pausePoints] === '1' && typeof process.send === 'function';
  const isolateExecutionTimeout = process.env[env.isolateExecutionTimeout];
  if (pausePoints) {
    process.on('message', (message: ChaosPauseCommand) => {
      armed = message.arm;
      armedTool = message.tool;
    });
    // The harness went away (crashed or killed): do not live on as an orphan.
    process.on('disconnect', () => process.exit(1));
  }
  const pausePoint = (moment: ChaosPauseMoment, tool: string): void => {
    if (armed !== moment || (armedTool !== undefined && armedTool !== tool)) return;
    armed = null;
    // Stops right here, in synchronous work, as a GC pause or CPU starvation would; the harness resumes it.
    process.kill(process.pid, 'SIGSTOP');
  };
  if (pausePoints) {
    // `in-activation`: stop while the workflow thread runs an activation.
    installActivationPausePoint({
      shouldStop: () => {
        if (armed !== 'in-activation') return false;
        armed = null;
        return true;
      },
    });
  }
  const worker = await createChaosWorker({
    who: 'chaos-worker',
    env,
    idempotencyStore,
    transcripts,
    thinkMs: Number(process.env[env.thinkMs] ?? CHAOS_WORKER_DEFAULTS.thinkMs),
    leaseMs: Number(process.env[env.leaseMs] ?? CHAOS_WORKER_DEFAULTS.leaseMs),
    ...(pausePoints ? { pausePoint } : {}),
    ...(isolateExecutionTimeout ? { isolateExecutionTimeout: isolateExecutionTimeout as Duration } : {}),
  });
  const running = worker.run();
  console.log(`${CHAOS_WORKER_READY} pid=${process.pid}`);
  await running;
  // Stopped by SIGTERM: the open IPC channel would keep the process alive, so leave explicitly.
  process.exit(0);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error('chaos-worker failed:', error);
    process.exit(1);
  });
}
