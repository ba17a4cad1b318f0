import type { WorkflowHandle } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getAgentRunState, startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import {
  approveStep,
  getPendingApprovals,
  listPendingApprovals,
  rejectStep,
  type PendingApproval,
} from '../../src/client/approval-client';
import { ApprovalError } from '../../src/client/approval-error';
import type { RunApprovalPolicy } from '../../src/contract/approval-types';
import { argumentsDigest } from '../../src/activities/arguments-digest';
import { SqliteAuditStore } from '../../src/stores/audit/sqlite-audit-store';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import { SEARCH_ATTRIBUTES } from '../../src/contract/search-attributes';
import { createWorker } from '../../src/runtime/create-worker';
import type { AgentRunResult, FailurePolicy } from '../../src/contract/agent-run-types';
import { createApprovalTools, type ApprovalToolCall } from '../support/approval-tools';
import { useTestTemporal, testServer, uniqueTaskQueue } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

/**
 * Issue 12 (approval gate) on the real dev server: every case of "Done when" except the crash, which lives
 * in approvals-crash.test.ts. What ran is counted where the tools run; the audit trail is read back from
 * the SQLite audit store the worker wrote.
 */

const temporal = useTestTemporal();
let auditStore: SqliteAuditStore;
beforeAll(async () => {
  auditStore = new SqliteAuditStore({ path: join(mkdtempSync(join(tmpdir(), 'approvals-audit-')), 'audit.sqlite') });
});
afterAll(async () => {
  await auditStore.close();
});

/** A run of the approval tools on its own task queue, with a worker that writes to the test's audit store. */
interface GatedRun {
  handle: WorkflowHandle;
  /** What every key of the run starts with (workflow id and first run id). */
  runKey: string;
  taskQueue: string;
  calls: ApprovalToolCall[];
  /** The calls waiting for a decision, once there is at least one (from the run's state). */
  pending(): Promise<PendingApproval[]>;
  result(): Promise<AgentRunResult>;
}

async function withGatedRun<T>(
  options: {
    script: ScriptedTurn[];
    approval?: RunApprovalPolicy;
    failurePolicy?: FailurePolicy;
    allowRunsToWaive?: boolean;
  },
  body: (run: GatedRun) => Promise<T>,
): Promise<T> {
  const { tools, calls } = createApprovalTools();
  const taskQueue = uniqueTaskQueue('approvals');
  const { worker } = await createWorker({
    // Stores not given here stay in memory (durable ones are the default).
    stores: 'memory',
    tools,
    connection: temporal.nativeConnection,
    settings: { namespace: testServer().namespace, taskQueue },
    workflowBundle: { codePath: testServer().bundlePath },
    auditStore,
    ...(options.allowRunsToWaive ? { approvals: { allowRunsToWaive: true } } : {}),
  });
  return runWith(worker, async () => {
    const handle = await startAgentRun(
      temporal.client,
      {
        goal: 'approvals',
        model: { provider: 'scripted', script: options.script },
        ...(options.approval ? { approval: options.approval } : {}),
        ...(options.failurePolicy ? { failurePolicy: options.failurePolicy } : {}),
      },
      { taskQueue },
    );
    return body({
      handle,
      runKey: `${handle.workflowId}/${handle.firstExecutionRunId}`,
      taskQueue,
      calls,
      pending: () =>
        waitFor('the call awaiting approval', async () => {
          const pending = await getPendingApprovals(temporal.client, handle.workflowId);
          return pending.length > 0 ? pending : undefined;
        }),
      result: () => waitForAgentRun(handle),
    });
  });
}

function runWith<T>(worker: Worker, body: () => Promise<T>): Promise<T> {
  return worker.runUntil(body);
}

const pay = (amountEur: number, reference = 'INV-1'): ScriptedTurn => ({
  toolCalls: [{ name: 'pay', arguments: { amountEur, reference } }],
});
const final: ScriptedTurn = { text: 'done', final: true };

async function refusal(promise: Promise<unknown>): Promise<ApprovalError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApprovalError);
  return error as ApprovalError;
}

describe('a call that needs approval', () => {
  test('waits in awaiting_approval, marked in DurableAwaitingApproval, and runs once when approved', async () => {
    await withGatedRun({ script: [pay(120), final] }, async (run) => {
      const [pending] = await run.pending();
      expect(pending).toMatchObject({
        stepId: 1,
        tool: 'pay',
        arguments: { amountEur: 120, reference: 'INV-1' },
        digest: argumentsDigest({ reference: 'INV-1', amountEur: 120 }),
      });
      const state = await getAgentRunState(temporal.client, run.handle.workflowId);
      expect(state.steps[0]?.status).toBe('awaiting_approval');
      const listed = await waitFor('the pending approval listed', async () => {
        const all = await listPendingApprovals(temporal.client, { taskQueue: run.taskQueue });
        return all.length > 0 ? all : undefined;
      });
      expect(listed.map((p) => [p.workflowId, p.stepId, p.tool])).toEqual([[run.handle.workflowId, 1, 'pay']]);
      const attributes = (await run.handle.describe()).typedSearchAttributes;
      expect(attributes.get(SEARCH_ATTRIBUTES.awaitingApproval)).toEqual(['pay']);
      expect(run.calls).toEqual([]);

      const decided = await approveStep(temporal.client, run.handle.workflowId, {
        stepId: 1,
        digest: pending!.digest,
        approver: 'alice',
        reason: 'invoice checked',
      });
      expect(decided).toMatchObject({ stepId: 1, tool: 'pay', decision: 'approved', approver: 'alice' });

      const result = await run.result();
      expect(result.status).toBe('completed');
      expect(result.steps[0]).toMatchObject({
        status: 'succeeded',
        approval: { decision: 'approved', decidedBy: 'alice', reason: 'invoice checked' },
      });
      expect(run.calls.filter((c) => c.tool === 'pay')).toHaveLength(1);
      expect(
        (await run.handle.describe()).typedSearchAttributes.get(SEARCH_ATTRIBUTES.awaitingApproval),
      ).toBeUndefined();

      const audit = await auditStore.get(`${run.runKey}/1`);
      expect(audit).toMatchObject({
        workflowId: run.handle.workflowId,
        stepId: 1,
        tool: 'pay',
        argumentsDigest: pending!.digest,
        arguments: { amountEur: 120, reference: 'INV-1' },
        decision: 'approved',
        decidedBy: 'alice',
        reason: 'invoice checked',
        outcome: 'succeeded',
      });
      expect(audit!.requestedAt).toBeLessThanOrEqual(audit!.decidedAt!);
      expect(audit!.decidedAt).toBeLessThanOrEqual(audit!.completedAt!);
    });
  });

  test('rejected, is not run and the model gets the rejection as an observation', async () => {
    await withGatedRun({ script: [pay(900), final] }, async (run) => {
      const [pending] = await run.pending();
      await rejectStep(temporal.client, run.handle.workflowId, {
        stepId: pending!.stepId,
        digest: pending!.digest,
        approver: 'bob',
        reason: 'over budget',
      });
      const result = await run.result();
      expect(result.status).toBe('completed');
      expect(result.turns).toBe(2); // the model had another turn, with the rejection in its transcript
      expect(result.steps[0]).toMatchObject({
        status: 'failed',
        observation: { status: 'error', code: 'APPROVAL_REJECTED', retryable: false, attempts: 0 },
        approval: { decision: 'rejected', decidedBy: 'bob', reason: 'over budget' },
      });
      expect(result.steps[0]?.observation).toMatchObject({ message: expect.stringContaining('over budget') });
      expect(run.calls).toEqual([]);
      expect(await auditStore.get(`${run.runKey}/1`)).toMatchObject({
        decision: 'rejected',
        decidedBy: 'bob',
        reason: 'over budget',
        outcome: 'not_run',
        outcomeCode: 'APPROVAL_REJECTED',
      });
    });
  });

  test('rejected under onRejection "abort", aborts the run and compensates what was done', async () => {
    const script = [{ toolCalls: [{ name: 'reserve', arguments: { item: 'seat 3A' } }] }, pay(300), final];
    await withGatedRun({ script, approval: { onRejection: 'abort' } }, async (run) => {
      const [pending] = await run.pending();
      expect(pending?.stepId).toBe(2);
      await rejectStep(temporal.client, run.handle.workflowId, {
        stepId: 2,
        digest: pending!.digest,
        approver: 'carol',
        reason: 'fraud suspected',
      });
      const result = await run.result();
      expect(result.status).toBe('compensated');
      expect(result.reason).toMatch(/Step 2 \(pay\) was rejected by carol: fraud suspected/);
      expect(run.calls.map((c) => [c.tool, c.key])).toEqual([
        ['reserve', `${run.runKey}/1`],
        ['release', `${run.runKey}/1/undo`],
      ]);
      expect(await auditStore.get(`${run.runKey}/2`)).toMatchObject({
        decision: 'rejected',
        decidedBy: 'carol',
        outcome: 'not_run',
      });
    });
  });

  test('with no decision before the timeout, counts as rejected', async () => {
    await withGatedRun({ script: [pay(50), final], approval: { timeoutMs: 1500 } }, async (run) => {
      const [pending] = await run.pending();
      expect(pending!.deadline - pending!.requestedAt).toBe(1500);
      const result = await run.result();
      expect(result.steps[0]).toMatchObject({
        status: 'failed',
        observation: { code: 'APPROVAL_TIMEOUT', retryable: false },
        approval: { decision: 'timed_out' },
      });
      expect(run.calls).toEqual([]);
      expect(await auditStore.get(`${run.runKey}/1`)).toMatchObject({
        decision: 'timed_out',
        outcome: 'not_run',
        outcomeCode: 'APPROVAL_TIMEOUT',
      });
      // Too late: the step is decided.
      const late = await refusal(
        approveStep(temporal.client, run.handle.workflowId, { stepId: 1, digest: pending!.digest, approver: 'x' }),
      );
      expect(late.code).toBe('APPROVAL_RUN_NOT_RUNNING');
    });
  });
});

describe('the decideApproval update', () => {
  test('refuses a wrong digest and an unknown step, and the call keeps waiting', async () => {
    await withGatedRun({ script: [pay(120), final] }, async (run) => {
      const [pending] = await run.pending();
      const other = argumentsDigest({ amountEur: 12000, reference: 'INV-1' });
      const wrong = await refusal(
        approveStep(temporal.client, run.handle.workflowId, { stepId: 1, digest: other, approver: 'mallory' }),
      );
      expect(wrong.code).toBe('APPROVAL_DIGEST_MISMATCH');
      const unknown = await refusal(
        approveStep(temporal.client, run.handle.workflowId, { stepId: 7, digest: pending!.digest, approver: 'x' }),
      );
      expect(unknown.code).toBe('APPROVAL_UNKNOWN_STEP');
      const noReason = await refusal(
        rejectStep(temporal.client, run.handle.workflowId, {
          stepId: 1,
          digest: pending!.digest,
          approver: 'x',
          reason: ' ',
        }),
      );
      expect(noReason.code).toBe('APPROVAL_INVALID_DECISION');
      expect(await getPendingApprovals(temporal.client, run.handle.workflowId)).toHaveLength(1);
      expect(run.calls).toEqual([]);

      await approveStep(temporal.client, run.handle.workflowId, {
        stepId: 1,
        digest: pending!.digest,
        approver: 'alice',
      });
      expect((await run.result()).steps[0]?.status).toBe('succeeded');
      expect(await auditStore.get(`${run.runKey}/1`)).toMatchObject({
        decidedBy: 'alice',
        outcome: 'succeeded',
      });
    });
  });

  test('refuses a second decision: an approval is consumed once', async () => {
    await withGatedRun(
      { script: [pay(120), { toolCalls: [{ name: 'lookup', arguments: { account: 'a' } }] }, final] },
      async (run) => {
        const [pending] = await run.pending();
        const decision = { stepId: 1, digest: pending!.digest, approver: 'alice' };
        await approveStep(temporal.client, run.handle.workflowId, decision);
        const again = await refusal(approveStep(temporal.client, run.handle.workflowId, decision));
        expect(again.code).toBe('APPROVAL_ALREADY_DECIDED');
        const reject = await refusal(
          rejectStep(temporal.client, run.handle.workflowId, {
            ...decision,
            approver: 'bob',
            reason: 'changed my mind',
          }),
        );
        expect(reject.code).toBe('APPROVAL_ALREADY_DECIDED');
        const result = await run.result();
        expect(result.status).toBe('completed');
        expect(run.calls.filter((c) => c.tool === 'pay')).toHaveLength(1);
        expect(await auditStore.get(`${run.runKey}/1`)).toMatchObject({
          decision: 'approved',
          decidedBy: 'alice',
          outcome: 'succeeded',
        });
      },
    );
  });
});

describe('the approval policy', () => {
  test('a predicate on the validated arguments gates only large amounts', async () => {
    const transfer = (amount: number): ScriptedTurn => ({
      toolCalls: [{ name: 'transfer', arguments: { to: 'acct-9', amount } }],
    });
    await withGatedRun({ script: [transfer(50), transfer(500), final] }, async (run) => {
      const [pending] = await run.pending();
      expect(pending).toMatchObject({ stepId: 2, tool: 'transfer', arguments: { to: 'acct-9', amount: 500 } });
      expect(run.calls.map((c) => c.input)).toEqual([{ to: 'acct-9', amount: 50 }]);
      await approveStep(temporal.client, run.handle.workflowId, {
        stepId: 2,
        digest: pending!.digest,
        approver: 'alice',
      });
      const result = await run.result();
      expect(result.steps.map((s) => [s.status, s.approval?.decision])).toEqual([
        ['succeeded', undefined],
        ['succeeded', 'approved'],
      ]);
      expect(await auditStore.get(`${run.runKey}/1`)).toBeUndefined();
      expect(await auditStore.list({ workflowId: run.handle.workflowId })).toEqual([
        expect.objectContaining({ stepId: 2, tool: 'transfer', decision: 'approved', outcome: 'succeeded' }),
      ]);
    });
  });

  test("a run may require approval for more tools, not waive a tool's own unless the worker allows it", async () => {
    const script = [{ toolCalls: [{ name: 'reserve', arguments: { item: 'room' } }] }, pay(10), final];
    await withGatedRun({ script, approval: { tools: { reserve: 'always', pay: 'never' } } }, async (run) => {
      const [reserve] = await run.pending();
      expect(reserve?.tool).toBe('reserve');
      await approveStep(temporal.client, run.handle.workflowId, {
        stepId: 1,
        digest: reserve!.digest,
        approver: 'alice',
      });
      const payStep = await waitFor('pay awaiting approval', async () => {
        const pending = await getPendingApprovals(temporal.client, run.handle.workflowId);
        return pending.find((p) => p.tool === 'pay');
      });
      await rejectStep(temporal.client, run.handle.workflowId, {
        stepId: payStep.stepId,
        digest: payStep.digest,
        approver: 'alice',
        reason: 'not now',
      });
      const result = await run.result();
      expect(result.policyWarnings).toContainEqual(expect.stringMatching(/waive approval for "pay".*still required/));
      expect(run.calls.map((c) => c.tool)).toEqual(['reserve']);
    });
  });

  test("a run's waiver on a worker that allows it: the call runs once, nobody is asked, the audit trail says waived", async () => {
    await withGatedRun(
      { script: [pay(15), final], approval: { tools: { pay: 'never' } }, allowRunsToWaive: true },
      async (run) => {
        const result = await run.result();
        expect(result.steps[0]).toMatchObject({ tool: 'pay', status: 'succeeded' });
        expect(run.calls.filter((c) => c.tool === 'pay')).toHaveLength(1);
        expect(await auditStore.get(`${run.runKey}/1`)).toMatchObject({
          tool: 'pay',
          argumentsDigest: argumentsDigest({ amountEur: 15, reference: 'INV-1' }),
          decision: 'waived',
        });
      },
    );
  });

  test('an approved irreversible call may come before compensable steps', async () => {
    const script = [pay(20), { toolCalls: [{ name: 'reserve', arguments: { item: 'room' } }] }, final];
    await withGatedRun({ script }, async (run) => {
      const [pending] = await run.pending();
      await approveStep(temporal.client, run.handle.workflowId, {
        stepId: 1,
        digest: pending!.digest,
        approver: 'alice',
      });
      const result = await run.result();
      expect(result.steps.map((s) => [s.tool, s.status])).toEqual([
        ['pay', 'succeeded'],
        ['reserve', 'succeeded'],
      ]);
    });
  });

  test('arguments that do not validate are refused without asking anyone', async () => {
    const script = [{ toolCalls: [{ name: 'pay', arguments: { amountEur: '120', reference: 'INV-1' } }] }, final];
    await withGatedRun({ script }, async (run) => {
      const result = await run.result();
      expect(result.steps[0]).toMatchObject({ status: 'failed', observation: { code: 'INVALID_ARGUMENTS' } });
      expect(result.steps[0]?.approval).toBeUndefined();
      expect(await auditStore.list({ workflowId: run.handle.workflowId })).toEqual([]);
    });
  });
});
