/**
 * A worker process with `createWorker`'s default stores (test/integration/default-stores.test.ts): no store option
 * at all, only `record_step` (one effect per call at the test ledger, reconciled after a crash). Where the default
 * SQLite files go is the environment's, as for any worker (`DURABLE_TOOLS_SQLITE_PATH`, ...). Prints
 * {@link DEFAULT_STORES_WORKER_READY} once polling; runs until killed.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createWorker } from '../../src/runtime/create-worker';
import { recordStepTool } from './restart-worker';
import { workerProcessEnv } from './worker-process-main';

/** Environment variables the worker reads (its key and transcript paths are not used: the defaults are). */
export const DEFAULT_STORES_WORKER_ENV = workerProcessEnv('DT_DEFAULT_STORES', { ledgerUrl: 'LEDGER_URL' });

/** The line the worker prints when it starts polling. */
export const DEFAULT_STORES_WORKER_READY = 'default-stores-worker ready';

/** This script, for `spawnTestWorkerProcess`. */
export const DEFAULT_STORES_WORKER = {
  script: __filename,
  env: DEFAULT_STORES_WORKER_ENV,
  ready: DEFAULT_STORES_WORKER_READY,
};

async function main(): Promise<void> {
  const env = DEFAULT_STORES_WORKER_ENV;
  const required = (variable: string): string => {
    const value = process.env[variable];
    if (!value) throw new Error(`default-stores-worker: ${variable} is not set.`);
    return value;
  };
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const { worker } = await createWorker({
    tools: [recordStepTool(required(env.ledgerUrl))],
    settings: {
      address: required(env.address),
      namespace: process.env[env.namespace] ?? 'default',
      taskQueue: required(env.taskQueue),
    },
    workflowBundle: { codePath: required(env.bundlePath) },
  });
  const running = worker.run();
  console.log(`${DEFAULT_STORES_WORKER_READY} pid=${process.pid}`);
  await running;
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error('default-stores-worker failed:', error);
    process.exit(1);
  });
}
