import type { ChildProcess } from 'node:child_process';
import { killProcess, spawnTestWorkerProcess } from '../support/worker-process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { approveStep } from '../../src/client/approval-client';
import { PostgresAuditStore } from '../../src/stores/audit/postgres-audit-store';
import { waitForAgentRun } from '../../src/client/agent-run-client';
import { createLedgerPayTool } from '../support/approval-tools';
import { APPROVAL_WORKER, APPROVAL_WORKER_LEASE_MS } from '../support/approval-worker';
import { startLedgerServer, type LedgerServer } from '../support/ledger-server';
import { createSqliteTestWorker } from '../support/sqlite-test-worker';
import { uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { startPayAwaitingApproval } from '../support/approval-runs';

/**
 * Crash safety of approvals (issue 12): a worker process SIGKILLed while a call waits for approval, or just
 * after the approval, and a new worker: the approval is not asked again and the tool's effect happens exactly
 * once, counted at a ledger that does not deduplicate. The audit trail is in Postgres, written by both workers.
 */

const POSTGRES_URL = process.env.DURABLE_TOOLS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const temporal = useTestTemporal();
let ledger: LedgerServer;
let schema: string;
let auditStore: PostgresAuditStore;
let workDir: string;
/** One worker process per test, started together (starting one takes a while on a busy machine). */
const workers: Record<'waiting' | 'approved', { taskQueue: string; keysPath: string; process?: ChildProcess }> = {
  waiting: { taskQueue: uniqueTaskQueue('approval-kill-waiting'), keysPath: '' },
  approved: { taskQueue: uniqueTaskQueue('approval-kill-approved'), keysPath: '' },
};
beforeAll(async () => {
  ledger = await startLedgerServer();
  schema = `approvals_crash_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  auditStore = new PostgresAuditStore({ connectionString: POSTGRES_URL, schema });
  workDir = mkdtempSync(join(tmpdir(), 'approvals-crash-'));
  await Promise.all(
    Object.values(workers).map(async (w) => {
      w.keysPath = join(workDir, `${w.taskQueue}.sqlite`);
      w.process = await spawnWorker(w.taskQueue, w.keysPath);
    }),
  );
}, 120_000);
afterAll(async () => {
  for (const w of Object.values(workers)) if (w.process && w.process.exitCode === null) w.process.kill('SIGKILL');
  await auditStore.close();
  const pool = new Pool({ connectionString: POSTGRES_URL });
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
  await pool.end();
  await ledger.close();
});

/** Starts the approval worker in its own process; resolves once it polls. */
function spawnWorker(taskQueue: string, keysPath: string): Promise<ChildProcess> {
  return spawnTestWorkerProcess(
    APPROVAL_WORKER,
    taskQueue,
    { ledgerUrl: ledger.url, keysPath, auditSchema: schema },
    { DURABLE_TOOLS_POSTGRES_URL: POSTGRES_URL },
  );
}

/** A second worker in this process, with the same idempotency keys and audit trail. */
async function secondWorker(taskQueue: string, keysPath: string) {
  const audit = new PostgresAuditStore({ connectionString: POSTGRES_URL, schema });
  const { worker, close } = await createSqliteTestWorker(
    temporal,
    taskQueue,
    { keysPath },
    {
      tools: [createLedgerPayTool(ledger.url)],
      leaseMs: APPROVAL_WORKER_LEASE_MS,
      auditStore: audit,
    },
  );
  return {
    worker,
    close: async () => {
      await close();
      await audit.close();
    },
  };
}

async function updatesAccepted(workflowId: string): Promise<number> {
  const history = await temporal.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length;
}

test('a worker SIGKILLed while a call waits for approval, then approve: the tool runs exactly once', async () => {
  const { taskQueue, keysPath, process: first } = workers.waiting;
  const { handle, pending } = await startPayAwaitingApproval(temporal.client, taskQueue, 120);
  await killProcess(first!);

  const { worker, close } = await secondWorker(taskQueue, keysPath);
  const result = await worker.runUntil(async () => {
    await approveStep(temporal.client, handle.workflowId, { stepId: 1, digest: pending.digest, approver: 'alice' });
    return waitForAgentRun(handle);
  });
  await close();

  expect(result.status).toBe('completed');
  expect(result.steps[0]).toMatchObject({
    status: 'succeeded',
    approval: { decision: 'approved', decidedBy: 'alice' },
  });
  expect(ledger.effects.filter((e) => e.key === `${handle.workflowId}/${handle.firstExecutionRunId}/1`)).toHaveLength(
    1,
  );
  expect(await updatesAccepted(handle.workflowId)).toBe(1);
  expect(await auditStore.get(`${handle.workflowId}/${handle.firstExecutionRunId}/1`)).toMatchObject({
    tool: 'pay',
    argumentsDigest: pending.digest,
    decision: 'approved',
    decidedBy: 'alice',
    outcome: 'succeeded',
  });
});

test('a worker SIGKILLed just after the approval: not asked again, and the tool runs exactly once', async () => {
  const { taskQueue, keysPath, process: first } = workers.approved;
  const { handle, pending } = await startPayAwaitingApproval(temporal.client, taskQueue, 120);
  await approveStep(temporal.client, handle.workflowId, { stepId: 1, digest: pending.digest, approver: 'bob' });
  await killProcess(first!);

  const { worker, close } = await secondWorker(taskQueue, keysPath);
  const result = await worker.runUntil(waitForAgentRun(handle));
  await close();

  expect(result.status).toBe('completed');
  expect(result.steps[0]).toMatchObject({ status: 'succeeded', approval: { decision: 'approved', decidedBy: 'bob' } });
  expect(ledger.effects.filter((e) => e.key === `${handle.workflowId}/${handle.firstExecutionRunId}/1`)).toHaveLength(
    1,
  );
  expect(await updatesAccepted(handle.workflowId)).toBe(1);
  expect(await auditStore.get(`${handle.workflowId}/${handle.firstExecutionRunId}/1`)).toMatchObject({
    decision: 'approved',
    outcome: 'succeeded',
  });
});
