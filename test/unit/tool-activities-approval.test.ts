import { MockActivityEnvironment } from '@temporalio/testing';
import { z } from 'zod';
import { createApprovalActivities } from '../../src/activities/approval-activities';
import { argumentsDigest } from '../../src/activities/arguments-digest';
import { createToolActivities, type ToolActivity } from '../../src/activities/tool-activities';
import type { ToolErrorObservation } from '../../src/contract/activity-protocol';
import type { ApprovalAuditRecord } from '../../src/contract/approval-types';
import type { ToolActivityInput } from '../../src/contract/tool-activity-types';
import type { AuditStore } from '../../src/stores/audit/audit-store';
import { MemoryAuditStore } from '../../src/stores/audit/memory-audit-store';
import { MemoryIdempotencyStore } from '../../src/stores/idempotency/memory-idempotency-store';
import { defineTool, type Tool } from '../../src/tools/define-tool';
import { createToolRegistry } from '../../src/tools/tool-registry';
import { failureOf } from '../support/application-failure';

const KEY = 'wf-1/run-1/1';
const payInput = z.object({ amount: z.number(), to: z.string().default('ACME') });

/** The gated and ungated tools of these tests; `ran` lists what each implementation was called with. */
function tools(ran: string[]): Tool[] {
  const pay = defineTool({
    name: 'pay',
    description: 'Pays; refund undoes it.',
    input: payInput,
    output: z.object({ paid: z.number() }),
    effect: 'compensable',
    idempotent: false,
    approval: 'always',
    undo: 'refund',
  });
  return [
    pay.implement(async ({ amount }) => {
      ran.push(`pay ${amount}`);
      return { paid: amount };
    }),
    defineTool({
      name: 'refund',
      description: 'Refunds a payment (the undo of pay; irreversible itself: it needs approval by default).',
      input: z.object({ originalInput: payInput, originalKey: z.string() }).passthrough(),
      output: z.object({ refunded: z.boolean() }),
      effect: 'irreversible',
      idempotent: true,
    }).implement(async ({ originalInput }) => {
      ran.push(`refund ${originalInput.amount}`);
      return { refunded: true };
    }),
    defineTool({
      name: 'transfer',
      description: 'Transfers; only large amounts need approval.',
      input: z.object({ amount: z.number() }),
      output: z.object({ sent: z.number() }),
      effect: 'irreversible',
      idempotent: false,
      approval: ({ amount }) => amount > 100,
    }).implement(async ({ amount }) => {
      ran.push(`transfer ${amount}`);
      return { sent: amount };
    }),
    defineTool({
      name: 'lookup',
      description: 'Reads a balance.',
      input: z.object({ account: z.string() }),
      output: z.object({ balance: z.number() }),
      effect: 'read-only',
    }).implement(async () => {
      ran.push('lookup');
      return { balance: 1 };
    }),
  ];
}

/** A worker's tool and approval activities sharing one audit store, as `createWorker` builds them. */
function worker(options: { auditStore?: AuditStore; allowRunsToWaive?: boolean } = {}) {
  const ran: string[] = [];
  const registry = createToolRegistry(tools(ran));
  const auditStore = options.auditStore ?? new MemoryAuditStore();
  const waive = options.allowRunsToWaive ? { allowRunsToWaive: true } : {};
  const activities = createToolActivities({
    registry,
    auditStore,
    idempotencyStore: new MemoryIdempotencyStore(),
    ...waive,
  });
  const approvals = createApprovalActivities({ registry, auditStore, ...waive });
  const call = (tool: string, args: unknown, extra: Partial<ToolActivityInput> = {}) =>
    new MockActivityEnvironment({ attempt: 1, scheduledTimestampMs: Date.now() }).run(
      activities[tool] as ToolActivity,
      { arguments: args, idempotencyKey: KEY, stepId: 1, ...extra },
    );
  return { ran, auditStore, approvals, call };
}

/** What the engine's gate does for a call: evaluate (writes the request), then record the human's decision. */
async function decide(
  w: ReturnType<typeof worker>,
  tool: string,
  args: unknown,
  decision: 'approved' | 'rejected',
): Promise<void> {
  const requestedAt = Date.now();
  const input = { workflowId: 'wf-1', stepId: 1, idempotencyKey: KEY, tool, arguments: args };
  const evaluation = await w.approvals.evaluateApproval({ ...input, requestedAt, deadline: requestedAt + 60_000 });
  if (evaluation.status !== 'required') throw new Error(`expected a required approval, got ${evaluation.status}`);
  await w.approvals.recordApprovalAudit({
    idempotencyKey: KEY,
    workflowId: 'wf-1',
    stepId: 1,
    tool,
    argumentsDigest: evaluation.digest,
    arguments: evaluation.arguments,
    requestedAt,
    deadline: requestedAt + 60_000,
    decision,
    decidedBy: 'alice',
    decidedAt: requestedAt,
    ...(decision === 'rejected' ? { reason: 'no' } : {}),
  });
}

/** The run's waiver as the gate asks for it: `evaluateApproval` with the run's `'never'`. */
async function waive(w: ReturnType<typeof worker>, tool: string, args: unknown): Promise<void> {
  const requestedAt = Date.now();
  await w.approvals.evaluateApproval({
    workflowId: 'wf-1',
    stepId: 1,
    idempotencyKey: KEY,
    tool,
    arguments: args,
    runOverride: 'never',
    requestedAt,
    deadline: requestedAt + 60_000,
  });
}

async function refusal(promise: Promise<unknown>) {
  const failure = await failureOf(promise);
  return { failure, observation: failure.details?.[0] as ToolErrorObservation };
}

describe('the tool activity of a tool that requires approval', () => {
  test('refuses a call without a recorded decision with APPROVAL_REQUIRED, and its implementation never runs', async () => {
    const w = worker();
    const { failure, observation } = await refusal(w.call('pay', { amount: 5 }));
    expect(failure.type).toBe('APPROVAL_REQUIRED');
    expect(failure.nonRetryable).toBe(true);
    expect(observation.message).toContain('no approval was recorded for this call');
    expect(observation.message).toContain('durable-tools approve');
    expect(w.ran).toEqual([]);
  });

  test('refuses a call that carries an approved digest of its own but no recorded decision', async () => {
    const w = worker();
    const approvedDigest = argumentsDigest({ amount: 5, to: 'ACME' });
    const { failure } = await refusal(w.call('pay', { amount: 5 }, { approvedDigest }));
    expect(failure.type).toBe('APPROVAL_REQUIRED');
    expect(w.ran).toEqual([]);
  });

  test('runs once with an approving record for its key and the digest of its validated arguments', async () => {
    const w = worker();
    await decide(w, 'pay', { amount: 5 }, 'approved');
    // The digest is of the validated arguments: the default `to` is part of it, the key order is not.
    await expect(w.call('pay', '{"amount":5}')).resolves.toMatchObject({ output: { paid: 5 } });
    await expect(w.call('pay', { amount: 5 })).resolves.toMatchObject({ output: { paid: 5 }, replayed: true });
    expect(w.ran).toEqual(['pay 5']);
  });

  test('refuses a call whose arguments are not the ones approved under its key', async () => {
    const w = worker();
    await decide(w, 'pay', { amount: 5 }, 'approved');
    const { failure, observation } = await refusal(w.call('pay', { amount: 500 }));
    expect(failure.type).toBe('APPROVAL_REQUIRED');
    expect(observation.message).toContain('other arguments');
    expect(w.ran).toEqual([]);
  });

  test('refuses a call of another tool under a key approved for a different tool', async () => {
    const w = worker();
    await decide(w, 'transfer', { amount: 500 }, 'approved');
    const { failure } = await refusal(w.call('pay', { amount: 500 }));
    expect(failure.type).toBe('APPROVAL_REQUIRED');
    expect(w.ran).toEqual([]);
  });

  test('refuses a rejected call', async () => {
    const w = worker();
    await decide(w, 'pay', { amount: 5 }, 'rejected');
    const { failure, observation } = await refusal(w.call('pay', { amount: 5 }));
    expect(failure.type).toBe('APPROVAL_REQUIRED');
    expect(observation.message).toContain('rejected');
    expect(w.ran).toEqual([]);
  });

  test('refuses a call that is still waiting for its decision', async () => {
    const w = worker();
    const requestedAt = Date.now();
    await w.approvals.evaluateApproval({
      workflowId: 'wf-1',
      stepId: 1,
      idempotencyKey: KEY,
      tool: 'pay',
      arguments: { amount: 5 },
      requestedAt,
      deadline: requestedAt + 60_000,
    });
    const { observation } = await refusal(w.call('pay', { amount: 5 }));
    expect(observation.message).toContain('still waiting for a decision');
    expect(w.ran).toEqual([]);
  });

  test("runs a call its run waived when the worker allows runs to waive, from the gate's 'waived' record", async () => {
    const w = worker({ allowRunsToWaive: true });
    await waive(w, 'pay', { amount: 5 });
    expect(await w.auditStore.get(KEY)).toMatchObject({ decision: 'waived', tool: 'pay' });
    await expect(w.call('pay', { amount: 5 })).resolves.toMatchObject({ output: { paid: 5 } });
    expect(w.ran).toEqual(['pay 5']);
  });

  test("refuses a 'waived' record on a worker that does not allow runs to waive", async () => {
    const auditStore = new MemoryAuditStore();
    const record: ApprovalAuditRecord = {
      idempotencyKey: KEY,
      workflowId: 'wf-1',
      stepId: 1,
      tool: 'pay',
      argumentsDigest: argumentsDigest({ amount: 5, to: 'ACME' }),
      arguments: { amount: 5, to: 'ACME' },
      requestedAt: 1,
      deadline: 2,
      decision: 'waived',
    };
    await auditStore.write(record);
    const w = worker({ auditStore });
    const { failure, observation } = await refusal(w.call('pay', { amount: 5 }));
    expect(failure.type).toBe('APPROVAL_REQUIRED');
    expect(observation.message).toContain('does not allow runs to waive');
    expect(w.ran).toEqual([]);
  });

  test('a waiver the worker does not allow writes no record: approval stays required', async () => {
    const w = worker();
    await waive(w, 'pay', { amount: 5 });
    expect((await w.auditStore.get(KEY))?.decision).toBeUndefined();
  });

  test('with a predicate: a call it requires approval for is refused, a call it does not runs', async () => {
    const w = worker();
    expect((await refusal(w.call('transfer', { amount: 500 }))).failure.type).toBe('APPROVAL_REQUIRED');
    await expect(w.call('transfer', { amount: 50 })).resolves.toMatchObject({ output: { sent: 50 } });
    expect(w.ran).toEqual(['transfer 50']);
  });

  test("runs the engine's compensation of a call (its undo tool) without a decision, as the saga does", async () => {
    const w = worker();
    const args = { originalInput: { amount: 5, to: 'ACME' }, originalKey: KEY };
    await expect(
      w.call('refund', args, { idempotencyKey: `${KEY}/undo`, compensationOf: 'pay' }),
    ).resolves.toMatchObject({ output: { refunded: true } });
    expect(w.ran).toEqual(['refund 5']);
  });

  test('refuses a gated tool dressed as a compensation of a tool it does not undo', async () => {
    const w = worker();
    const args = { originalInput: { amount: 5, to: 'ACME' }, originalKey: KEY };
    const { failure } = await refusal(
      w.call('refund', args, { idempotencyKey: `${KEY}/undo`, compensationOf: 'transfer' }),
    );
    expect(failure.type).toBe('APPROVAL_REQUIRED');
    expect(w.ran).toEqual([]);
  });

  test('a dry run answers a gated call from its record without a decision, and runs nothing', async () => {
    const w = worker();
    const digest = argumentsDigest({ amount: 5, to: 'ACME' });
    await expect(
      w.call('pay', { amount: 5 }, { dryRun: { readOnlyTools: 'record', candidates: [{ stepId: 3, digest }] } }),
    ).resolves.toMatchObject({ output: null, dryRunAnswer: { sourceStep: 3 } });
    expect(w.ran).toEqual([]);
  });

  test('an unreachable audit store makes the check retryable (UNAVAILABLE), and nothing runs', async () => {
    const auditStore = new MemoryAuditStore();
    auditStore.get = () => Promise.reject(new Error('connection refused'));
    const w = worker({ auditStore });
    const { failure } = await refusal(w.call('pay', { amount: 5 }));
    expect(failure.type).toBe('UNAVAILABLE');
    expect(failure.nonRetryable).toBe(false);
    expect(w.ran).toEqual([]);
  });
});

describe('the tool activity of a call approved with edited arguments', () => {
  /** The gate's record of an approval whose approver edited `args` into `edited` (reviewed by the worker). */
  async function approveWithEdits(w: ReturnType<typeof worker>, args: unknown, edited: unknown): Promise<void> {
    const review = await w.approvals.reviewEditedArguments({ tool: 'pay', arguments: edited });
    if (!review.ok) throw new Error(`expected the edit to validate: ${review.observation.message}`);
    await decide(w, 'pay', args, 'approved');
    const record = await w.auditStore.get(KEY);
    await w.auditStore.write({
      ...record!,
      editedArguments: review.arguments,
      editedArgumentsDigest: review.digest,
      decidedAt: Date.now(),
    });
  }

  test('runs the edited arguments under the approved edited digest', async () => {
    const w = worker();
    await approveWithEdits(w, { amount: 500 }, { amount: 50 });
    const approvedDigest = argumentsDigest({ amount: 50, to: 'ACME' });
    await expect(w.call('pay', { amount: 50 }, { approvedDigest })).resolves.toMatchObject({ output: { paid: 50 } });
    expect(w.ran).toEqual(['pay 50']);
  });

  test("refuses the model's original arguments once the approver edited them", async () => {
    const w = worker();
    await approveWithEdits(w, { amount: 500 }, { amount: 50 });
    const { failure, observation } = await refusal(w.call('pay', { amount: 500 }));
    expect(failure.type).toBe('APPROVAL_REQUIRED');
    expect(observation.message).toContain('other arguments');
    expect(w.ran).toEqual([]);
  });

  test("an edit the tool's schema refuses is never given a digest", async () => {
    const w = worker();
    const review = await w.approvals.reviewEditedArguments({ tool: 'pay', arguments: { amount: 'fifty' } });
    expect(review).toMatchObject({ ok: false, observation: { code: 'INVALID_ARGUMENTS' } });
  });
});

describe('the tool activity of a tool without an approval requirement', () => {
  test('never reads the audit store', async () => {
    const auditStore = new MemoryAuditStore();
    const reads = jest.spyOn(auditStore, 'get');
    const w = worker({ auditStore });
    await expect(w.call('lookup', { account: 'a' })).resolves.toMatchObject({ output: { balance: 1 } });
    expect(reads).not.toHaveBeenCalled();
  });

  test('a predicate that does not require approval for the arguments reads no record either', async () => {
    const auditStore = new MemoryAuditStore();
    const reads = jest.spyOn(auditStore, 'get');
    const w = worker({ auditStore });
    await expect(w.call('transfer', { amount: 50 })).resolves.toMatchObject({ output: { sent: 50 } });
    expect(reads).not.toHaveBeenCalled();
  });
});
