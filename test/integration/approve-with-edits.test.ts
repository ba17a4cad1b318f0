import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { argumentsDigest } from '../../src/activities/arguments-digest';
import { waitForAgentRun } from '../../src/client/agent-run-client';
import { approveStep, getPendingApprovals } from '../../src/client/approval-client';
import { ApprovalError } from '../../src/client/approval-error';
import { SqliteAuditStore } from '../../src/stores/audit/sqlite-audit-store';
import { startPayAwaitingApproval } from '../support/approval-runs';
import { createLedgerPayTool } from '../support/approval-tools';
import { runCliInProcess, testServerCliEnv, withProcessEnv } from '../support/cli-in-process';
import { startLedgerServer, type LedgerServer } from '../support/ledger-server';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';

/**
 * Approve with edits (issue 45, part 4) on the real dev server: a human approves a gated `pay` with other
 * arguments; they are validated by the tool's schema on the worker, get their own digest, are what runs (counted
 * at the test ledger, which does not deduplicate), and the SQLite audit trail keeps both.
 */

const dir = mkdtempSync(join(tmpdir(), 'approve-with-edits-'));
const taskQueue = uniqueTaskQueue('approve-with-edits');
let ledger: LedgerServer;
let auditStore: SqliteAuditStore;
const temporal = useTestTemporal({
  worker: async (connected) => {
    ledger = await startLedgerServer();
    auditStore = new SqliteAuditStore({ path: join(dir, 'audit.sqlite') });
    return createTestWorker(connected, { tools: [createLedgerPayTool(ledger.url)], taskQueue, auditStore });
  },
});
afterAll(async () => {
  await ledger?.close();
  await auditStore?.close();
});

const original = { amountEur: 500, reference: 'INV-7' };
const edited = { amountEur: 50, reference: 'INV-7' };

function paymentsUnder(workflowId: string) {
  return ledger.effects.filter((effect) => effect.key.startsWith(`${workflowId}/`) && effect.kind === 'payment');
}

test('a call approved with edited arguments runs them once, and the audit shows both', async () => {
  const { handle, pending } = await startPayAwaitingApproval(temporal.client, taskQueue, original.amountEur);
  expect(pending.digest).toBe(argumentsDigest(original));

  const decided = await approveStep(temporal.client, handle.workflowId, {
    stepId: pending.stepId,
    digest: pending.digest,
    approver: 'alice',
    arguments: edited,
  });
  expect(decided).toMatchObject({ decision: 'approved', editedDigest: argumentsDigest(edited) });
  const result = await waitForAgentRun(handle);

  expect(result.status).toBe('completed');
  expect(paymentsUnder(handle.workflowId).map((effect) => effect.amount)).toEqual([50]);
  expect(result.steps[0]).toMatchObject({
    status: 'succeeded',
    arguments: original,
    approval: { digest: argumentsDigest(original), editedArguments: edited, editedDigest: argumentsDigest(edited) },
  });
  const record = await auditStore.get(result.steps[0]!.idempotencyKey);
  expect(record).toMatchObject({
    decision: 'approved',
    decidedBy: 'alice',
    arguments: original,
    argumentsDigest: argumentsDigest(original),
    editedArguments: edited,
    editedArgumentsDigest: argumentsDigest(edited),
    outcome: 'succeeded',
  });
});

test('edited arguments the tool schema refuses leave the call waiting; `approve --arguments` then runs valid ones', async () => {
  const { handle, pending } = await startPayAwaitingApproval(temporal.client, taskQueue, original.amountEur);

  const refused = approveStep(temporal.client, handle.workflowId, {
    stepId: pending.stepId,
    digest: pending.digest,
    approver: 'alice',
    arguments: { amountEur: 'fifty', reference: 'INV-7' },
  });
  await expect(refused).rejects.toBeInstanceOf(ApprovalError);
  await expect(refused).rejects.toMatchObject({ code: 'APPROVAL_INVALID_ARGUMENTS' });
  expect(await getPendingApprovals(temporal.client, handle.workflowId)).toHaveLength(1);

  const cli = await withProcessEnv(testServerCliEnv(dir), () =>
    runCliInProcess([
      'approve',
      handle.workflowId,
      '1',
      '--digest',
      pending.digest,
      '--approver',
      'bob',
      '--arguments',
      JSON.stringify(edited),
      '--yes',
    ]),
  );
  expect(cli.stderr).toBe('');
  expect(cli.code).toBe(0);
  expect(cli.stdout).toContain(`with edited arguments (digest ${argumentsDigest(edited)})`);

  const result = await waitForAgentRun(handle);
  expect(result.status).toBe('completed');
  expect(paymentsUnder(handle.workflowId).map((effect) => effect.amount)).toEqual([50]);
});
