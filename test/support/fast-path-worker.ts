/**
 * A worker process of the fast-path crash test (`node --import tsx test/support/fast-path-worker.ts`), so the
 * test can SIGKILL it in the middle of a workflow task of local activities. Its keys are a SQLite file the
 * worker that takes over opens too; its model is the `counted` scripted model. Prints
 * {@link FAST_PATH_WORKER_READY} once polling; runs until killed.
 */
import { countedScriptedModel, createFastPathTools } from './fast-path-tools';
import { runWorkerProcess, workerProcessEnv } from './worker-process-main';

/** Environment variables the fast-path worker reads. */
export const FAST_PATH_WORKER_ENV = workerProcessEnv('DT_FAST', {
  ledgerUrl: 'LEDGER_URL',
  gateUrl: 'GATE_URL',
  modelLog: 'MODEL_LOG',
  dieAtGate: 'DIE_AT_GATE',
});

/** The line the worker prints when it starts polling. */
export const FAST_PATH_WORKER_READY = 'fast-path-worker ready';

/** This script, for `spawnTestWorkerProcess`. */
export const FAST_PATH_WORKER = { script: __filename, env: FAST_PATH_WORKER_ENV, ready: FAST_PATH_WORKER_READY };

if (require.main === module) {
  const env = FAST_PATH_WORKER_ENV;
  runWorkerProcess(
    'fast-path-worker',
    env,
    (required) => ({
      tools: createFastPathTools({
        ledgerUrl: required(env.ledgerUrl),
        gateUrl: required(env.gateUrl),
        dieAtGate: process.env[env.dieAtGate] === '1',
      }),
      modelProviders: { counted: countedScriptedModel(required(env.modelLog)) },
    }),
    { transcripts: false },
  );
}
