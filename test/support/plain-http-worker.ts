/**
 * A worker process for the pause test of tools written the ordinary way (plain `fetch` / `node:http`), run
 * as `node --import tsx test/support/plain-http-worker.ts` so that a SIGSTOP of its pid stops the worker
 * itself. Its keys and transcripts are SQLite files the worker that takes over opens too. Prints
 * {@link PLAIN_HTTP_WORKER_READY} once polling; runs until killed.
 */
import { runWorkerProcess, workerProcessEnv } from './worker-process-main';
import { createPlainHttpTools, type PlainHttpClient } from './plain-http-tools';

/** Environment variables the plain-HTTP worker reads. */
export const PLAIN_HTTP_WORKER_ENV = workerProcessEnv('DT_PLAIN', {
  ledgerUrl: 'LEDGER_URL',
  gateUrl: 'GATE_URL',
  client: 'CLIENT',
  worker: 'WORKER',
  reportDir: 'REPORT_DIR',
});

/** The line the worker prints when it starts polling. */
export const PLAIN_HTTP_WORKER_READY = 'plain-http-worker ready';

/** Lease of a key while a call runs: short (below the tool's 3 s timeout), so a pause outlasts it soon. */
export const PLAIN_HTTP_WORKER_LEASE_MS = 1500;

/** This script, for `spawnTestWorkerProcess`. */
export const PLAIN_HTTP_WORKER = { script: __filename, env: PLAIN_HTTP_WORKER_ENV, ready: PLAIN_HTTP_WORKER_READY };

if (require.main === module) {
  const env = PLAIN_HTTP_WORKER_ENV;
  runWorkerProcess('plain-http-worker', env, (required) => ({
    tools: createPlainHttpTools({
      ledgerUrl: required(env.ledgerUrl),
      gateUrl: required(env.gateUrl),
      client: required(env.client) as PlainHttpClient,
      worker: required(env.worker),
      reportDir: required(env.reportDir),
    }),
    leaseMs: PLAIN_HTTP_WORKER_LEASE_MS,
  }));
}
