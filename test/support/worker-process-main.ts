import { DefaultLogger, Runtime } from '@temporalio/worker';
import { SqliteIdempotencyStore } from '../../src/stores/idempotency/sqlite-idempotency-store';
import { SqliteTranscriptStore } from '../../src/stores/transcripts/sqlite-transcript-store';
import { SqliteAuditStore } from '../../src/stores/audit/sqlite-audit-store';
import { createWorker, type CreateWorkerOptions } from '../../src/runtime/create-worker';

/**
 * The SQLite audit file beside a worker's key file: the approval decisions the tool activities check, shared by a
 * killed worker and the one that takes its calls over, like the keys.
 */
export function auditPathBeside(keysPath: string): string {
  return `${keysPath.replace(/\.sqlite$/, '')}-audit.sqlite`;
}

/** The names of the environment variables every crash-test worker process reads. */
export interface WorkerProcessEnv {
  address: string;
  namespace: string;
  taskQueue: string;
  bundlePath: string;
  /** SQLite file of the idempotency keys, shared with the worker that takes over. */
  keysPath: string;
  /** SQLite file of the transcripts (checkpoints, job records), shared likewise. */
  transcriptsPath: string;
}

/**
 * The variable names of a worker process whose variables all begin with `prefix`: `${prefix}_ADDRESS`,
 * `_NAMESPACE`, `_TASK_QUEUE`, `_WORKFLOW_BUNDLE`, `_KEYS_DB`, `_TRANSCRIPTS_DB`, and `${prefix}_${suffix}` for
 * each of `more` (its own settings, by key).
 */
export function workerProcessEnv<M extends Record<string, string>>(
  prefix: string,
  more: M,
): WorkerProcessEnv & { readonly [K in keyof M]: string } {
  const own = Object.fromEntries(Object.entries(more).map(([key, suffix]) => [key, `${prefix}_${suffix}`]));
  return {
    address: `${prefix}_ADDRESS`,
    namespace: `${prefix}_NAMESPACE`,
    taskQueue: `${prefix}_TASK_QUEUE`,
    bundlePath: `${prefix}_WORKFLOW_BUNDLE`,
    keysPath: `${prefix}_KEYS_DB`,
    transcriptsPath: `${prefix}_TRANSCRIPTS_DB`,
    ...(own as { [K in keyof M]: string }),
  };
}

/**
 * The body of a crash-test worker process (started by `spawnWorkerProcess`): a worker on the server, task
 * queue and bundle its environment names, with SQLite key, audit and transcript stores the next worker opens too,
 * plus `options(required)` (its tools, lease, ...); prints `${name} ready pid=<pid>` once polling and runs
 * until killed (a failure to start exits 1). `required(variable)` reads a variable that must be set. With
 * `stores.transcripts` false the worker has no transcript store of its own (and reads no `transcriptsPath`).
 */
export function runWorkerProcess(
  name: string,
  env: WorkerProcessEnv,
  options: (required: (variable: string) => string) => Partial<CreateWorkerOptions>,
  stores: { transcripts: boolean } = { transcripts: true },
): void {
  run(name, env, options, stores).catch((error: unknown) => {
    console.error(`${name} failed:`, error);
    process.exit(1);
  });
}

async function run(
  name: string,
  env: WorkerProcessEnv,
  options: (required: (variable: string) => string) => Partial<CreateWorkerOptions>,
  stores: { transcripts: boolean },
): Promise<void> {
  const required = (variable: string): string => {
    const value = process.env[variable];
    if (!value) throw new Error(`${name}: ${variable} is not set.`);
    return value;
  };
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const own = options(required);
  const { worker } = await createWorker({
    // Stores not given here stay in memory (durable ones are the default).
    stores: 'memory',
    tools: [],
    settings: {
      address: required(env.address),
      namespace: process.env[env.namespace] ?? 'default',
      taskQueue: required(env.taskQueue),
    },
    workflowBundle: { codePath: required(env.bundlePath) },
    idempotencyStore: new SqliteIdempotencyStore({ path: required(env.keysPath) }),
    ...(own.auditStore ? {} : { auditStore: new SqliteAuditStore({ path: auditPathBeside(required(env.keysPath)) }) }),
    ...(stores.transcripts ? { transcripts: new SqliteTranscriptStore({ path: required(env.transcriptsPath) }) } : {}),
    workerOptions: { stickyQueueScheduleToStartTimeout: '2 seconds' },
    ...own,
  });
  const running = worker.run();
  console.log(`${name} ready pid=${process.pid}`);
  await running;
}
