import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { z } from 'zod';
import { createToolActivities, type ToolActivity } from '../../src/activities/tool-activities';
import type { ToolActivityResult } from '../../src/activities/tool-activity-types';
import { fingerprint } from '../../src/idempotency/canonical-json';
import { MemoryIdempotencyStore } from '../../src/idempotency/memory-idempotency-store';
import { defineTool, type ReconcileResult } from '../../src/tools/define-tool';
import { PermanentToolError, TransientToolError } from '../../src/tools/tool-errors';
import { createToolRegistry } from '../../src/tools/tool-registry';

const KEY = 'run-1/1';

interface Setup {
  activity: ToolActivity;
  calls: unknown[];
  store: MemoryIdempotencyStore;
  clock: { now: number };
}

function setup(options: {
  idempotent?: boolean;
  effect?: 'read-only' | 'irreversible';
  behaviour?: (input: { amount: number }, attempt: number) => Promise<{ chargeId: string }>;
  reconcile?: (key: string) => Promise<ReconcileResult<{ chargeId: string }>>;
}): Setup {
  const clock = { now: 1_000_000 };
  const store = new MemoryIdempotencyStore({ clock: () => clock.now });
  const calls: unknown[] = [];
  const tool = defineTool({
    name: 'charge',
    description: 'Charges an amount.',
    input: z.object({ amount: z.number() }),
    output: z.object({ chargeId: z.string() }),
    effect: options.effect ?? 'irreversible',
    idempotent: options.idempotent ?? false,
    retry: { maximumAttempts: 3 },
  }).implement(
    async (input, ctx) => {
      calls.push(input);
      return options.behaviour ? options.behaviour(input, ctx.attempt) : { chargeId: `ch-${calls.length}` };
    },
    options.reconcile ? { reconcile: options.reconcile } : {},
  );
  const activities = createToolActivities({
    registry: createToolRegistry([tool]),
    idempotencyStore: store,
    leaseMs: 1000,
  });
  return { activity: activities.charge as ToolActivity, calls, store, clock };
}

function attempt(
  n: number,
  s: Setup,
  args: unknown = { amount: 5 },
  extra: Record<string, unknown> = {},
): Promise<ToolActivityResult> {
  const env = new MockActivityEnvironment({ attempt: n, scheduledTimestampMs: Date.now() });
  return env.run(s.activity, { arguments: args, idempotencyKey: KEY, stepId: 1, ...extra });
}

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ApplicationFailure)) throw new Error(`expected an ApplicationFailure, got ${String(error)}`);
  return error;
}

/** Leaves the key in progress, as a worker that died after `begin` would. */
async function crashedHolder(s: Setup, args = { amount: 5 }) {
  await s.store.begin(KEY, fingerprint({ tool: 'charge', input: args }), { owner: 'dead-worker', leaseMs: 1000 });
  s.clock.now += 5000;
}

describe('a tool call with an idempotency store', () => {
  test('replays a completed call from the store without running the tool again', async () => {
    const s = setup({});
    const first = await attempt(1, s);
    const second = await attempt(2, s);
    expect(second).toEqual({ output: first.output, attempt: 2, replayed: true });
    expect(s.calls).toHaveLength(1);
  });

  test('refuses the same key with other arguments as IDEMPOTENCY_CONFLICT', async () => {
    const s = setup({});
    await attempt(1, s, { amount: 5 });
    const failure = await failureOf(attempt(2, s, { amount: 6 }));
    expect(failure.type).toBe('IDEMPOTENCY_CONFLICT');
    expect(failure.nonRetryable).toBe(true);
    expect(s.calls).toHaveLength(1);
  });

  test('stores a permanent failure and replays it without running the tool again', async () => {
    const s = setup({
      behaviour: async () => {
        throw new PermanentToolError('card declined', { code: 'PERMISSION_DENIED' });
      },
    });
    const first = await failureOf(attempt(1, s));
    const second = await failureOf(attempt(2, s));
    expect(second.type).toBe(first.type);
    expect(second.message).toBe(first.message);
    expect(s.calls).toHaveLength(1);
  });

  test('forgets a transient failure so the next attempt runs the tool again', async () => {
    const s = setup({
      behaviour: async (_input, n) => {
        if (n === 1) throw new TransientToolError('busy', { code: 'UNAVAILABLE' });
        return { chargeId: 'ch-ok' };
      },
    });
    const failure = await failureOf(attempt(1, s));
    expect(failure.nonRetryable).toBe(false);
    await expect(attempt(2, s)).resolves.toMatchObject({ output: { chargeId: 'ch-ok' } });
    expect(s.calls).toHaveLength(2);
  });

  test('waits for another attempt that still holds the key instead of running twice', async () => {
    const s = setup({});
    await s.store.begin(KEY, fingerprint({ tool: 'charge', input: { amount: 5 } }), { owner: 'other', leaseMs: 1000 });
    const failure = await failureOf(attempt(2, s));
    expect(failure.type).toBe('CONFLICT');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBeDefined();
    expect(s.calls).toHaveLength(0);
  });

  test('adopts the result that reconcile finds after a crash and does not run the tool', async () => {
    const s = setup({ reconcile: async () => ({ done: true, output: { chargeId: 'ch-found' } }) });
    await crashedHolder(s);
    await expect(attempt(2, s)).resolves.toEqual({ output: { chargeId: 'ch-found' }, attempt: 2, replayed: true });
    expect(s.calls).toHaveLength(0);
    await expect(attempt(3, s)).resolves.toMatchObject({ output: { chargeId: 'ch-found' }, replayed: true });
  });

  test('runs the tool when reconcile finds that the crashed call had no effect', async () => {
    const s = setup({ reconcile: async () => ({ done: false }) });
    await crashedHolder(s);
    await expect(attempt(2, s)).resolves.toMatchObject({ output: { chargeId: 'ch-1' } });
    expect(s.calls).toHaveLength(1);
  });

  test('keeps the key and retries when reconcile itself fails, never running the tool blindly', async () => {
    let reconcileCalls = 0;
    const s = setup({
      reconcile: async () => {
        reconcileCalls += 1;
        if (reconcileCalls === 1) throw new Error('ledger unreachable');
        return { done: true, output: { chargeId: 'ch-found' } };
      },
    });
    await crashedHolder(s);
    const failure = await failureOf(attempt(2, s));
    expect(failure.type).toBe('UNAVAILABLE');
    expect(failure.nonRetryable).toBe(false);
    s.clock.now += 5000; // the failed reconciler's lease runs out
    await expect(attempt(3, s)).resolves.toMatchObject({ output: { chargeId: 'ch-found' }, replayed: true });
    expect(s.calls).toHaveLength(0);
  });

  test('re-runs a tool that is idempotent downstream with the same key after a crash', async () => {
    const s = setup({ idempotent: true });
    await crashedHolder(s);
    await expect(attempt(2, s)).resolves.toMatchObject({ output: { chargeId: 'ch-1' } });
    expect(s.calls).toHaveLength(1);
  });

  test('stops with OUTCOME_UNKNOWN after a crash when the tool is neither idempotent nor reconcilable', async () => {
    const s = setup({});
    await crashedHolder(s);
    const failure = await failureOf(attempt(2, s));
    expect(failure.type).toBe('OUTCOME_UNKNOWN');
    expect(failure.nonRetryable).toBe(true);
    expect((await failureOf(attempt(3, s))).type).toBe('OUTCOME_UNKNOWN');
    expect(s.calls).toHaveLength(0);
  });

  test('leaves read-only tools out of the store', async () => {
    const s = setup({ effect: 'read-only' });
    await attempt(1, s);
    await attempt(2, s);
    expect(s.calls).toHaveLength(2);
  });

  test("keeps retrying a compensation past the tool's own maximum attempts", async () => {
    const s = setup({
      idempotent: true,
      behaviour: async () => {
        throw new TransientToolError('busy', { code: 'UNAVAILABLE' });
      },
    });
    const failure = await failureOf(attempt(7, s, { amount: 5 }, { compensationOf: 'book' }));
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBeDefined();
  });
});
