/**
 * A worker process for the sub-agent crash tests, run as `node --import tsx test/support/sub-agent-worker.ts`
 * so that a SIGKILL of its pid kills the worker itself. It runs the sub-agent tools (test/support/sub-agent-tools.ts)
 * against the test ledger, with its idempotency keys and transcripts in SQLite files the next worker opens too.
 * Prints {@link SUB_AGENT_WORKER_READY} once polling; runs until killed.
 */
import { subAgentTools } from './sub-agent-tools';
import { runWorkerProcess, workerProcessEnv } from './worker-process-main';

/** Environment variables the sub-agent worker reads. */
export const SUB_AGENT_WORKER_ENV = workerProcessEnv('DT_SUB_AGENT', { ledgerUrl: 'LEDGER_URL' });

/** The line the worker prints when it starts polling. */
export const SUB_AGENT_WORKER_READY = 'sub-agent-worker ready';

/** Lease of a key while a booking runs: short, so the next worker takes over soon after a kill. */
export const SUB_AGENT_WORKER_LEASE_MS = 1500;

/** This script, for `spawnTestWorkerProcess`. */
export const SUB_AGENT_WORKER = { script: __filename, env: SUB_AGENT_WORKER_ENV, ready: SUB_AGENT_WORKER_READY };

if (require.main === module) {
  const env = SUB_AGENT_WORKER_ENV;
  runWorkerProcess('sub-agent-worker', env, (required) => ({
    tools: subAgentTools(required(env.ledgerUrl)),
    leaseMs: SUB_AGENT_WORKER_LEASE_MS,
  }));
}
