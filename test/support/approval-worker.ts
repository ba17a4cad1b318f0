/**
 * A worker process for the approval crash tests, run as `node --import tsx test/support/approval-worker.ts`
 * so that a SIGKILL of its pid kills the worker itself. It runs `pay` against the test ledger, with its
 * idempotency keys in a SQLite file and its audit trail in Postgres, both shared with the next worker.
 * Prints {@link APPROVAL_WORKER_READY} once polling; runs until killed.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { PostgresAuditStore } from '../../src/stores/audit/postgres-audit-store';
import { SqliteIdempotencyStore } from '../../src/stores/idempotency/sqlite-idempotency-store';
import { createWorker } from '../../src/runtime/create-worker';
import { createLedgerPayTool } from './approval-tools';
import { workerProcessEnv } from './worker-process-main';

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

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`approval-worker: ${name} is not set.`);
  return value;
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const env = APPROVAL_WORKER_ENV;
  const { worker } = await createWorker({
    tools: [createLedgerPayTool(required(env.ledgerUrl))],
    settings: {
      address: required(env.address),
      namespace: process.env[env.namespace] ?? 'default',
      taskQueue: required(env.taskQueue),
    },
    workflowBundle: { codePath: required(env.bundlePath) },
    idempotencyStore: new SqliteIdempotencyStore({ path: required(env.keysPath) }),
    leaseMs: APPROVAL_WORKER_LEASE_MS,
    auditStore: new PostgresAuditStore({ schema: required(env.auditSchema) }),
    workerOptions: { stickyQueueScheduleToStartTimeout: '2 seconds' },
  });
  const running = worker.run();
  console.log(`${APPROVAL_WORKER_READY} pid=${process.pid}`);
  await running;
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error('approval-worker failed:', error);
    process.exit(1);
  });
}
