import { request as httpRequest } from 'node:http';
import { failureOf } from '../support/application-failure';
import { MockActivityEnvironment } from '@temporalio/testing';
import { z } from 'zod';
import { createToolActivities, type ToolActivity } from '../../src/activities/tool-activities';
import type { ToolActivityResult } from '../../src/contract/tool-activity-types';
import { fingerprint } from '../../src/stores/idempotency/canonical-json';
import { MemoryIdempotencyStore } from '../../src/stores/idempotency/memory-idempotency-store';
import { defineTool, type ReconcileResult } from '../../src/tools/define-tool';
import { withIdempotencyKey } from '../../src/tools/idempotent-fetch';
import { LeaseLostError } from '../../src/failures/lease-lost-error';
import type { ToolContext } from '../../src/tools/tool-context';
import { startRequestCounter } from '../support/request-counter';
import { PermanentToolError, TransientToolError } from '../../src/failures/tool-errors';
import { createToolRegistry } from '../../src/tools/tool-registry';
import { currentHolderIdentity, parseHolder, processOwner } from '../../src/activities/holder-identity';

const KEY = 'run-1/1';

interface Setup {
  activity: ToolActivity;
  calls: unknown[];
  store: MemoryIdempotencyStore;
  clock: { now: number; mono: number };
}

const LEASE_MS = 1000;
const GRACE_MS = 2000;

function setup(options: {
  idempotent?: boolean;
  effect?: 'read-only' | 'irreversible';
  behaviour?: (input: { amount: number }, attempt: number) => Promise<{ chargeId: string }>;
  reconcile?: (key: string) => Promise<ReconcileResult<{ chargeId: string }>>;
  execute?: (input: { amount: number }, ctx: ToolContext) => Promise<{ chargeId: string }>;
  deadHolderDrainMs?: number | false;
}): Setup {
  const clock = { now: 1_000_000, mono: 0 };
  const store = new MemoryIdempotencyStore({ clock: () => clock.now });
  const calls: unknown[] = [];
  const tool = defineTool({
    name: 'charge',
    description: 'Charges an amount.',
    input: z.object({ amount: z.number() }),
    output: z.object({ chargeId: z.string() }),
    effect: options.effect ?? 'irreversible',
    approval: 'never', // not a test of approvals (tool-activities-approval.test.ts)
    idempotent: options.idempotent ?? false,
    retry: { maximumAttempts: 3 },
  }).implement(
    async (input, ctx) => {
      calls.push(input);
      if (options.execute) return options.execute(input, ctx);
      return options.behaviour ? options.behaviour(input, ctx.attempt) : { chargeId: `ch-${calls.length}` };
    },
    options.reconcile ? { reconcile: options.reconcile } : {},
  );
  const activities = createToolActivities({
    registry: createToolRegistry([tool]),
    idempotencyStore: store,
    leaseMs: LEASE_MS,
    takeoverGraceMs: GRACE_MS,
    leaseClock: () => clock.mono,
    deadHolderDrainMs: options.deadHolderDrainMs ?? 0,
  });
  return { activity: activities.charge as ToolActivity, calls, store, clock };
}

function attempt(
  n: number,
  s: Setup,
  args: unknown = { amount: 5 },
  extra: Record<string, unknown> = {},
): Promise<ToolActivityResult> {
  const { info, ...input } = extra as { info?: Record<string, unknown> };
  const env = new MockActivityEnvironment({ attempt: n, scheduledTimestampMs: Date.now(), ...info });
  return env.run(s.activity, { arguments: args, idempotencyKey: KEY, stepId: 1, ...input });
}

/** Leaves the key in progress, as a worker that died after `begin` would. */
async function crashedHolder(s: Setup, args = { amount: 5 }) {
  await s.store.begin(KEY, fingerprint({ tool: 'charge', input: args }), { owner: 'dead-worker', leaseMs: LEASE_MS });
  s.clock.now += LEASE_MS + GRACE_MS;
}

describe('a tool call with an idempotency store', () => {
  test('replays a completed call from the store without running the tool again', async () => {
    const s = setup({});
    const first = await attempt(1, s);
    const second = await attempt(2, s);
    expect(second).toEqual({ output: first.output, attempt: 2, replayed: true, argumentsDigest: expect.any(String) });
    expect(s.calls).toHaveLength(1);
  });

  test("records the call's result to be made durable by the store's next synced commit", async () => {
    const s = setup({});
    const complete = jest.spyOn(s.store, 'complete');
    await attempt(1, s);
    expect(complete).toHaveBeenCalledWith(KEY, expect.any(String), expect.anything(), { durableWithNextCommit: true });
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
    await expect(attempt(2, s)).resolves.toEqual({
      output: { chargeId: 'ch-found' },
      attempt: 2,
      replayed: true,
      argumentsDigest: expect.any(String),
    });
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

describe('a tool call whose key is held by a dead process', () => {
  const self = currentHolderIdentity();
  // Linux only: elsewhere no holder is ever provably dead, and the lease + grace path is the only one.
  const onLinux = self ? test : test.skip;
  /** A claim by a process that had this pid before (another start time): it no longer exists. */
  const deadOwner = () => `${processOwner('host', { ...self!, startTime: '1' })}/attempt-1`;

  async function heldBy(s: Setup, owner: string) {
    const print = fingerprint({ tool: 'charge', input: { amount: 5 } });
    await s.store.begin(KEY, print, { owner, leaseMs: LEASE_MS, takeoverGraceMs: GRACE_MS });
  }

  onLinux('takes the key over at once and reconciles, without waiting for the lease and the grace', async () => {
    const reconciled: string[] = [];
    const s = setup({
      reconcile: async (key) => {
        reconciled.push(key);
        return { done: true, output: { chargeId: 'ch-found' } };
      },
    });
    await heldBy(s, deadOwner());

    await expect(attempt(2, s)).resolves.toMatchObject({ output: { chargeId: 'ch-found' }, replayed: true });
    expect(reconciled).toEqual([KEY]);
    expect(s.calls).toHaveLength(0);
  });

  onLinux(
    'counts the drain from the worker’s start for a holder already gone then (a restart after a crash)',
    async () => {
      const s = setup({
        reconcile: async () => ({ done: true, output: { chargeId: 'ch-found' } }),
        deadHolderDrainMs: 3_600_000,
      });
      await heldBy(s, deadOwner());
      // The worker has been up for the whole drain: nothing is left to wait (else this test would time out).
      s.clock.mono += 3_600_000;

      await expect(attempt(2, s)).resolves.toMatchObject({ output: { chargeId: 'ch-found' }, replayed: true });
      expect(s.calls).toHaveLength(0);
    },
  );

  onLinux('runs the tool once when reconcile finds that the dead holder had no effect', async () => {
    const s = setup({ reconcile: async () => ({ done: false }) });
    await heldBy(s, deadOwner());

    await expect(attempt(2, s)).resolves.toMatchObject({ output: { chargeId: 'ch-1' } });
    expect(s.calls).toHaveLength(1);
  });

  test('waits for a holder that is alive (this process), as for any other holder', async () => {
    const s = setup({ reconcile: async () => ({ done: false }) });
    await heldBy(s, `${processOwner('host', self)}/attempt-1`);

    const failure = await failureOf(attempt(2, s));
    expect(failure.type).toBe('CONFLICT');
    expect(s.calls).toHaveLength(0);
  });

  onLinux('waits for the lease and the grace when the dead-holder takeover is turned off', async () => {
    const s = setup({ reconcile: async () => ({ done: false }), deadHolderDrainMs: false });
    await heldBy(s, deadOwner());

    expect((await failureOf(attempt(2, s))).type).toBe('CONFLICT');
    s.clock.now += LEASE_MS + GRACE_MS;
    await expect(attempt(3, s)).resolves.toMatchObject({ output: { chargeId: 'ch-1' } });
  });

  test('waits for a holder with an old-format owner (no identity)', async () => {
    const s = setup({ reconcile: async () => ({ done: false }) });
    await heldBy(s, 'host:1/attempt-1');

    expect((await failureOf(attempt(2, s))).type).toBe('CONFLICT');
  });

  onLinux('records its own holder identity with each claim', async () => {
    const s = setup({ behaviour: () => new Promise(() => undefined) });
    void attempt(1, s).catch(() => undefined);
    await new Promise((resolve) => setImmediate(resolve));

    const print = fingerprint({ tool: 'charge', input: { amount: 5 } });
    const found = await s.store.begin(KEY, print, { owner: 'probe', leaseMs: LEASE_MS });
    expect(found.state).toBe('in_flight');
    expect(parseHolder((found as { owner: string }).owner)).toEqual(self);
  });
});

describe('a tool call that loses its lease', () => {
  test('waits during the takeover grace after the holder lease ran out, then reconciles', async () => {
    const s = setup({ reconcile: async () => ({ done: true, output: { chargeId: 'ch-found' } }) });
    await s.store.begin(KEY, fingerprint({ tool: 'charge', input: { amount: 5 } }), {
      owner: 'paused-worker',
      leaseMs: LEASE_MS,
    });
    s.clock.now += LEASE_MS + GRACE_MS / 2;

    const waiting = await failureOf(attempt(2, s));
    expect(waiting.type).toBe('CONFLICT');
    expect(waiting.nextRetryDelay).toBeDefined();
    s.clock.now += GRACE_MS / 2;
    await expect(attempt(3, s)).resolves.toMatchObject({ output: { chargeId: 'ch-found' }, replayed: true });
    expect(s.calls).toHaveLength(0);
  });

  test('refuses to send once the local lease deadline has passed, as after a pause', async () => {
    const sent: string[] = [];
    const s = setup({
      execute: async (_input, ctx) => {
        s.clock.mono += LEASE_MS; // the process was stopped for a whole lease, in synchronous work
        const init = withIdempotencyKey(ctx, { method: 'POST' });
        sent.push(String(init.method));
        return { chargeId: 'never' };
      },
    });
    const failure = await failureOf(attempt(1, s));
    expect(failure.type).toBe('LEASE_LOST');
    expect(failure.nonRetryable).toBe(false);
    expect(sent).toEqual([]);
    // The key is kept (not released): the next attempt must find out what happened, never run blindly.
    expect(
      await s.store.begin(KEY, fingerprint({ tool: 'charge', input: { amount: 5 } }), { owner: 'x' }),
    ).toMatchObject({ state: 'in_flight' });
  });

  test.each([
    ['global fetch', (url: string) => fetch(url, { method: 'POST', body: '{}' }).then(() => undefined)],
    [
      'node:http',
      (url: string) =>
        new Promise<void>((resolve, reject) => {
          const req = httpRequest(url, { method: 'POST' }, (res) => res.resume().on('end', resolve));
          req.on('error', reject);
          req.end('{}');
        }),
    ],
  ])(
    'refuses a plain %s request the tool sends after an await that outlasted the lease, even if the tool swallows the error',
    async (_client, send) => {
      const downstream = await startRequestCounter();
      let swallowed: unknown;
      const s = setup({
        execute: async () => {
          await new Promise((resolve) => setTimeout(resolve, 1));
          s.clock.mono += LEASE_MS; // the process was stopped inside the await for a whole lease
          await send(`${downstream.url}/charges`).catch((error: unknown) => (swallowed = error));
          return { chargeId: 'made-up' };
        },
      });
      try {
        const failure = await failureOf(attempt(1, s));
        expect(failure.type).toBe('LEASE_LOST');
        expect(swallowed).toBeDefined();
        expect(downstream.paths).toEqual([]);
      } finally {
        await downstream.close();
      }
    },
  );

  test('aborts ctx.signal with LeaseLostError when a renewal finds the key taken over', async () => {
    let reason: unknown;
    const s = setup({
      execute: async (_input, ctx) => {
        // Another worker takes the key over while this one is slow; the next renewal finds out.
        s.clock.now += LEASE_MS + GRACE_MS;
        await s.store.begin(KEY, fingerprint({ tool: 'charge', input: { amount: 5 } }), { owner: 'rescuer' });
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
        reason = ctx.signal.reason;
        ctx.assertLease();
        return { chargeId: 'never' };
      },
    });
    const failure = await failureOf(attempt(1, s));
    expect(reason).toBeInstanceOf(LeaseLostError);
    expect((reason as LeaseLostError).code).toBe('LEASE_TAKEN_OVER');
    expect(failure.type).toBe('LEASE_LOST');
  });

  test('gives the tool a fencing token larger than the previous owner of the key had', async () => {
    const tokens: string[] = [];
    const s = setup({
      reconcile: async () => ({ done: false }),
      execute: async (_input, ctx) => {
        tokens.push(String(ctx.fencingToken));
        return { chargeId: 'ch-ok' };
      },
    });
    const stale = await s.store.begin(KEY, fingerprint({ tool: 'charge', input: { amount: 5 } }), {
      owner: 'paused-worker',
      leaseMs: LEASE_MS,
    });
    s.clock.now += LEASE_MS + GRACE_MS;
    await attempt(2, s);
    expect(stale.state).toBe('started');
    expect(tokens).toHaveLength(1);
    expect(Number(tokens[0])).toBeGreaterThan(Number((stale as { fencingToken: string }).fencingToken));
  });

  test('does not count attempts that never ran the tool against its maximum attempts', async () => {
    const s = setup({
      idempotent: true,
      behaviour: async () => {
        throw new TransientToolError('busy', { code: 'UNAVAILABLE' });
      },
    });
    // Attempt 5: attempts 2-4 were lost to a paused worker; only attempt 1 ran the tool.
    const failure = await failureOf(attempt(5, s, { amount: 5 }, { info: { heartbeatDetails: { executions: 1 } } }));
    expect(failure.nonRetryable).toBe(false);
    expect(s.calls).toHaveLength(1);
  });

  test('gives up with TIMEOUT once every attempt the tool allows ran and the last timed out', async () => {
    const s = setup({ idempotent: true });
    const failure = await failureOf(attempt(6, s, { amount: 5 }, { info: { heartbeatDetails: { executions: 3 } } }));
    expect(failure.type).toBe('TIMEOUT');
    expect(failure.nonRetryable).toBe(true);
    expect(s.calls).toHaveLength(0);
  });
});
