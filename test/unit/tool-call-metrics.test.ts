import { MockActivityEnvironment } from '@temporalio/testing';
import { z } from 'zod';
import { createApprovalActivities } from '../../src/activities/approval-activities';
import { createToolActivities, type ToolActivity } from '../../src/activities/tool-activities';
import type { ToolActivityInput } from '../../src/contract/tool-activity-types';
import type { ApprovalAuditRecord } from '../../src/contract/approval-types';
import { fingerprint } from '../../src/stores/idempotency/canonical-json';
import { MemoryIdempotencyStore } from '../../src/stores/idempotency/memory-idempotency-store';
import { ENGINE_METRICS } from '../../src/telemetry/engine-metrics';
import { compensationInput } from '../../src/tools/compensation-input';
import { defineTool, type ReconcileResult } from '../../src/tools/define-tool';
import { RetryBudget } from '../../src/failures/retry-budget';
import { PermanentToolError, TransientToolError } from '../../src/failures/tool-errors';
import { createToolRegistry } from '../../src/tools/tool-registry';
import { inMemoryMetrics } from '../support/in-memory-telemetry';

/**
 * Issue 15, metrics: the tool activity wrapper records the `durable-tools` meter's instruments. Read back
 * through an in-memory metric reader of a real OpenTelemetry SDK meter provider.
 */

type Behaviour = (attempt: number) => Promise<{ id: string }>;

function setup(
  options: {
    behaviour?: Behaviour;
    idempotent?: boolean;
    retryBudget?: RetryBudget;
    store?: MemoryIdempotencyStore;
    reconcile?: () => Promise<ReconcileResult<{ id: string }>>;
  } = {},
) {
  const telemetry = inMemoryMetrics();
  const output = z.object({ id: z.string() });
  const bookContract = defineTool({
    name: 'book',
    description: 'Books.',
    input: z.object({ n: z.number() }),
    output,
    effect: 'compensable',
    undo: 'unbook',
    idempotent: options.idempotent ?? true,
    retry: { maximumAttempts: 3, initialDelay: '10 ms', maxDelay: '20 ms' },
  });
  const book = bookContract.implement(
    async (_input, ctx) => (options.behaviour ? options.behaviour(ctx.attempt) : { id: 'b-1' }),
    options.reconcile ? { reconcile: options.reconcile } : {},
  );
  const undo = defineTool({
    name: 'unbook',
    description: 'Undoes a booking.',
    input: compensationInput(bookContract),
    output,
    effect: 'irreversible',
    idempotent: true,
  }).implement(async () => ({ id: 'undone' }));
  const activities = createToolActivities({
    registry: createToolRegistry([book, undo]),
    meterProvider: telemetry.meterProvider,
    ...(options.retryBudget ? { retryBudget: options.retryBudget } : {}),
    ...(options.store ? { idempotencyStore: options.store, leaseMs: 1000, takeoverGraceMs: 0 } : {}),
  });
  const run = (activity: string, attempt: number, input: Partial<ToolActivityInput> = {}) =>
    new MockActivityEnvironment({ attempt, scheduledTimestampMs: Date.now() }).run(
      activities[activity] as ToolActivity,
      { arguments: { n: 1 }, idempotencyKey: 'run-1/1', stepId: 1, ...input },
    );
  return { ...telemetry, run };
}

const settle = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    () => undefined,
  );

describe('tool call metrics', () => {
  test('a call that succeeds counts one succeeded call of its tool and records its duration', async () => {
    const t = setup();
    await t.run('book', 1);
    expect(await t.total(ENGINE_METRICS.toolCalls, { tool: 'book', outcome: 'succeeded', compensation: false })).toBe(
      1,
    );
    expect(await t.recorded(ENGINE_METRICS.toolCallDuration, { tool: 'book', outcome: 'succeeded' })).toBe(1);
  });

  test('a transient failure counts a retry with its classification and the delay the engine chose', async () => {
    const t = setup({
      behaviour: async (attempt) => {
        if (attempt === 1) throw new TransientToolError('busy', { code: 'UNAVAILABLE' });
        return { id: 'b-2' };
      },
    });
    await settle(t.run('book', 1));
    await t.run('book', 2);
    expect(await t.total(ENGINE_METRICS.retries, { tool: 'book', classification: 'transient' })).toBe(1);
    expect(await t.recorded(ENGINE_METRICS.retryDelay, { tool: 'book' })).toBe(1);
    expect(await t.total(ENGINE_METRICS.toolCalls, { tool: 'book', outcome: 'retrying' })).toBe(1);
    expect(await t.total(ENGINE_METRICS.toolCalls, { tool: 'book', outcome: 'succeeded' })).toBe(1);
  });

  test('a permanent failure counts a failed call and no retry', async () => {
    const t = setup({
      behaviour: async () => {
        throw new PermanentToolError('sold out', { code: 'CONFLICT' });
      },
    });
    await settle(t.run('book', 1));
    expect(await t.total(ENGINE_METRICS.toolCalls, { tool: 'book', outcome: 'failed' })).toBe(1);
    expect(await t.total(ENGINE_METRICS.retries)).toBe(0);
  });

  test('a retry the retry budget refuses counts a refusal and a failed call', async () => {
    const t = setup({
      retryBudget: new RetryBudget({ capacity: 1, initialTokens: 0, depositPerCall: 0 }),
      behaviour: async () => {
        throw new TransientToolError('busy', { code: 'UNAVAILABLE' });
      },
    });
    await settle(t.run('book', 1));
    expect(await t.total(ENGINE_METRICS.retryBudgetRefusals, { tool: 'book' })).toBe(1);
    expect(await t.total(ENGINE_METRICS.toolCalls, { tool: 'book', outcome: 'failed' })).toBe(1);
  });

  test('a call that may have had an effect and cannot be repeated counts an unknown outcome', async () => {
    const t = setup({
      idempotent: false,
      behaviour: async () => {
        throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
      },
    });
    await settle(t.run('book', 1));
    expect(await t.total(ENGINE_METRICS.unknownOutcomes, { tool: 'book' })).toBe(1);
    expect(await t.total(ENGINE_METRICS.toolCalls, { tool: 'book', outcome: 'outcome_unknown' })).toBe(1);
  });

  test('a reconcile after an attempt died holding the key is counted with what it found', async () => {
    let now = 1_000_000;
    const store = new MemoryIdempotencyStore({ clock: () => now });
    const t = setup({ idempotent: false, store, reconcile: async () => ({ done: true, output: { id: 'found' } }) });
    await store.begin('run-1/1', fingerprint({ tool: 'book', input: { n: 1 } }), { owner: 'dead', leaseMs: 1000 });
    now += 5000;
    await expect(t.run('book', 2)).resolves.toMatchObject({ output: { id: 'found' }, replayed: true });
    expect(await t.total(ENGINE_METRICS.reconciles, { tool: 'book', result: 'done' })).toBe(1);
    expect(await t.total(ENGINE_METRICS.toolCalls, { tool: 'book', outcome: 'replayed' })).toBe(1);
  });

  test('a compensation counts under its undo tool with the tool it undoes', async () => {
    const t = setup();
    await t.run('unbook', 1, {
      arguments: { originalInput: { n: 1 }, originalKey: 'run-1/1' },
      idempotencyKey: 'run-1/1/undo',
      compensationOf: 'book',
    });
    expect(
      await t.total(ENGINE_METRICS.compensations, { tool: 'unbook', compensation_of: 'book', outcome: 'succeeded' }),
    ).toBe(1);
    expect(await t.total(ENGINE_METRICS.toolCalls, { tool: 'unbook', compensation: true })).toBe(1);
  });
});

describe('approval wait metrics', () => {
  const record = (extra: Partial<ApprovalAuditRecord>): ApprovalAuditRecord => ({
    idempotencyKey: 'run-1/1',
    workflowId: 'run-1',
    stepId: 1,
    tool: 'pay',
    argumentsDigest: 'd',
    arguments: {},
    requestedAt: 1_000,
    deadline: 100_000,
    ...extra,
  });

  test('an approval wait is counted once, with its decision and how long it waited', async () => {
    const telemetry = inMemoryMetrics();
    const { recordApprovalAudit } = createApprovalActivities({
      registry: createToolRegistry([]),
      meterProvider: telemetry.meterProvider,
    });
    await recordApprovalAudit(record({ decision: 'approved', decidedBy: 'ana', decidedAt: 4_000 }));
    // The approved call's outcome completes the record later: that is not another wait.
    await recordApprovalAudit(
      record({ decision: 'approved', decidedAt: 4_000, outcome: 'succeeded', completedAt: 5_000 }),
    );
    await recordApprovalAudit(
      record({ decision: 'rejected', decidedAt: 2_000, outcome: 'not_run', completedAt: 2_000 }),
    );
    expect(await telemetry.total(ENGINE_METRICS.approvalWaits, { tool: 'pay', decision: 'approved' })).toBe(1);
    expect(await telemetry.total(ENGINE_METRICS.approvalWaits, { tool: 'pay', decision: 'rejected' })).toBe(1);
    expect(await telemetry.total(ENGINE_METRICS.approvalWaitDuration, { decision: 'approved' })).toBe(3_000);
  });
});
