import { randomUUID } from 'node:crypto';
import { bundleWorkflowCode, type Worker } from '@temporalio/worker';
import { createApprovalActivities } from '../../src/activities/approval-activities';
import { createWorker } from '../../src/runtime/create-worker';
import { MemoryAuditStore } from '../../src/stores/audit/memory-audit-store';
import { createToolRegistry } from '../../src/tools/tool-registry';
import type { Tool } from '../../src/tools/define-tool';
import { createLedgerPayTool } from '../support/approval-tools';
import type { handMadeToolCall } from '../support/hand-made-call-workflow';
import { startLedgerServer, type LedgerServer } from '../support/ledger-server';
import { testServer, uniqueTaskQueue, useTestTemporal, type TestTemporal } from '../support/temporal-test-env';

/**
 * Issue 43, "approvals that hold wherever the call comes from", on the real dev server: a workflow of the test's own
 * calls the activity of `pay` (irreversible, so approval is required) by hand with `proxyActivities`, past the
 * engine's gate. The worker is the engine's (`createWorker`); effects are counted at a ledger that does not
 * deduplicate.
 */

const taskQueue = uniqueTaskQueue('hand-made-call');
const auditStore = new MemoryAuditStore();
let ledger: LedgerServer;
let pay: Tool;
const temporal = useTestTemporal({ worker: engineWorker });

/** The engine's worker (`createWorker`) for `pay`, with the test's own workflows bundled (the engine's bundle lacks them). */
async function engineWorker(t: TestTemporal): Promise<Worker> {
  ledger = await startLedgerServer();
  pay = createLedgerPayTool(ledger.url);
  const code = await bundleWorkflowCode({ workflowsPath: require.resolve('../support/hand-made-call-workflow') });
  const { worker } = await createWorker({
    tools: [pay],
    connection: t.nativeConnection,
    settings: { namespace: testServer().namespace, taskQueue },
    workflowBundle: code,
    auditStore,
  });
  return worker;
}

afterAll(async () => {
  await ledger.close();
});

/** Runs the test's own workflow, which calls `pay` by hand under `key` (default: its own first step key). */
function callByHand(workflowId: string, args: unknown, key?: string) {
  return temporal.client.workflow.execute<typeof handMadeToolCall>('handMadeToolCall', {
    taskQueue,
    workflowId,
    args: key ? ['pay', args, key] : ['pay', args],
  });
}

test("a gated tool's activity called by hand, without a decision, is refused with APPROVAL_REQUIRED and makes no effect", async () => {
  const workflowId = `hand-made-${randomUUID()}`;
  const outcome = await callByHand(workflowId, { amountEur: 40, reference: 'INV-7' });
  expect(outcome).toMatchObject({ ran: false, failureType: 'APPROVAL_REQUIRED', nonRetryable: true });
  expect(outcome.ran === false && outcome.message).toContain('requires approval');
  expect(ledger.effects.filter((e) => e.key.startsWith(`${workflowId}/`))).toEqual([]);
});

test('the same call by hand runs once when the audit store holds the decision the gate records for its key and digest', async () => {
  const key = `hand-made-approved-${randomUUID()}/run/1`;
  const args = { amountEur: 40, reference: 'INV-8' };
  // What the engine's gate writes for a call: the request, then the human's decision (approval-gate.ts).
  const approvals = createApprovalActivities({ registry: createToolRegistry([pay]), auditStore });
  const requestedAt = Date.now();
  const request = { workflowId: 'gated', stepId: 1, idempotencyKey: key, tool: 'pay', arguments: args };
  const evaluation = await approvals.evaluateApproval({ ...request, requestedAt, deadline: requestedAt + 60_000 });
  if (evaluation.status !== 'required') throw new Error(`expected approval to be required, got ${evaluation.status}`);
  await approvals.recordApprovalAudit({
    ...request,
    argumentsDigest: evaluation.digest,
    arguments: evaluation.arguments,
    requestedAt,
    deadline: requestedAt + 60_000,
    decision: 'approved',
    decidedBy: 'alice',
    decidedAt: requestedAt,
  });

  const other = await callByHand(`hand-made-${randomUUID()}`, { amountEur: 400, reference: 'INV-8' }, key);
  expect(other).toMatchObject({ ran: false, failureType: 'APPROVAL_REQUIRED' });
  expect(await callByHand(`hand-made-${randomUUID()}`, args, key)).toMatchObject({
    ran: true,
    output: { paymentId: expect.any(String) },
  });
  expect(ledger.effects.filter((e) => e.key === key)).toHaveLength(1);
});
