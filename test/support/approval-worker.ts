/**
 * A worker process for the approval crash tests, run as `node --import tsx test/support/approval-worker.ts`
 * so that a SIGKILL of its pid kills the worker itself. It runs `pay` against the test ledger, with its
 * idempotency keys in a SQLite file and its audit trail in Postgres, both shared with the next worker.
 * Prints {@link APPROVAL_WORKER_READY} once polling; runs until killed.
 */
import { PostgresAuditStore } from '../../src/stores/audit/postgres-audit-store';
import { createLedgerPayTool } from './approval-tools';
import { runWorkerProcess, workerProcessEnv } from './worker-process-main';

/** Environment variables the approval worker reads. */
export const APPROVAL_WORKER_ENV = workerProcessEnv('DT_APPROVAL', {
  ledgerUrl: 'LEDGER_URL',
  auditSchema: 'AUDIT_SCHEMA',
});

/** The line the worker prints when it starts polling. */
export const APPROVAL_WORKER_READY = 'approval-worker ready';

/** Lease of a key while `pay` runs: short, so the next worker takes over soon after a kill. */
export const APPROVAL_WORKER_LEASE_MS = 1500;

/** This script, for `spawnTestWorkerProcess` (it has no transcript store). */
export const APPROVAL_WORKER = { script: __filename, env: APPROVAL_WORKER_ENV, ready: APPROVAL_WORKER_READY };

if (require.main === module) {
  const env = APPROVAL_WORKER_ENV;
  runWorkerProcess(
    'approval-worker',
    env,
    (required) => ({
      tools: [createLedgerPayTool(required(env.ledgerUrl))],
      leaseMs: APPROVAL_WORKER_LEASE_MS,
      auditStore: new PostgresAuditStore({ schema: required(env.auditSchema) }),
    }),
    { transcripts: false },
  );
}
