import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'pg';
import {
  IDEMPOTENCY_DEFAULTS,
  IdempotencyStoreError,
  MemoryIdempotencyStore,
  PostgresIdempotencyStore,
  SqliteIdempotencyStore,
  type BeginOutcome,
  type IdempotencyStore,
  type IdempotencyStoreBaseOptions,
} from '../../src/stores/idempotency';

const POSTGRES_URL = process.env.DURABLE_TOOLS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SCHEMA = `idem_contract_${process.pid}_${Date.now().toString(36)}`;
const tempDir = mkdtempSync(join(tmpdir(), 'idem-contract-'));
const opened: IdempotencyStore[] = [];
let tableCounter = 0;

interface Backend {
  name: string;
  open(options?: IdempotencyStoreBaseOptions): IdempotencyStore;
}

const backends: Backend[] = [
  { name: 'memory', open: (options) => new MemoryIdempotencyStore(options) },
  {
    name: 'sqlite',
    open: (options) =>
      new SqliteIdempotencyStore({ ...options, path: join(tempDir, `store-${++tableCounter}.sqlite`) }),
  },
  {
    name: 'postgres',
    open: (options) =>
      new PostgresIdempotencyStore({
        ...options,
        connectionString: POSTGRES_URL,
        schema: SCHEMA,
        table: `t${++tableCounter}`,
        poolSize: 2,
      }),
  },
];

afterAll(async () => {
  await Promise.all(opened.map((store) => store.close()));
  const admin = new Pool({ connectionString: POSTGRES_URL, max: 1 });
  await admin.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await admin.end();
  rmSync(tempDir, { recursive: true, force: true });
});

/** Narrows an outcome to one state, failing the test with the actual outcome otherwise. */
function expectState<S extends BeginOutcome['state']>(
  outcome: BeginOutcome,
  state: S,
): Extract<BeginOutcome, { state: S }> {
  expect(outcome).toMatchObject({ state });
  return outcome as Extract<BeginOutcome, { state: S }>;
}

async function rejection(promise: Promise<unknown>): Promise<IdempotencyStoreError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(IdempotencyStoreError);
  return error as IdempotencyStoreError;
}

describe.each(backends)('the $name idempotency store', (backend) => {
  const start = 1_800_000_000_000;
  let now = start;
  let store: IdempotencyStore;
  const lease = { owner: 'worker-a', leaseMs: 1_000 };

  beforeEach(() => {
    now = start;
    store = backend.open({ clock: () => now });
    opened.push(store);
  });

  afterEach(async () => {
    await store.close();
  });

  /** Expects worker-b's `begin` of key `k` to find it in flight, held by worker-a until `leaseExpiresAt`. */
  async function expectHeldByWorkerA(leaseExpiresAt: number, retryAfterMs: number): Promise<void> {
    expect(await store.begin('k', 'fp', { owner: 'worker-b' })).toEqual({
      state: 'in_flight',
      owner: 'worker-a',
      leaseExpiresAt,
      retryAfterMs,
    });
  }

  it('starts a new key with a token and a lease', async () => {
    const outcome = expectState(await store.begin('k', 'fp', lease), 'started');
    expect(outcome.token).toEqual(expect.any(String));
    expect(outcome.leaseExpiresAt).toBe(start + 1_000);
  });

  it('replays the stored result of a completed key instead of starting it again', async () => {
    const { token } = expectState(await store.begin('k', 'fp', lease), 'started');
    await store.complete('k', token, { booking: 'B-1', seats: [1, 2], nested: { z: true, a: null } });

    const replay = expectState(await store.begin('k', 'fp', { owner: 'worker-b' }), 'completed');

    expect(replay.result).toEqual({ booking: 'B-1', seats: [1, 2], nested: { z: true, a: null } });
    expect(Object.keys(replay.result as object)).toEqual(['booking', 'seats', 'nested']);
  });

  it('replays an undefined result as undefined and a null result as null', async () => {
    const first = expectState(await store.begin('void', 'fp', lease), 'started');
    const second = expectState(await store.begin('null', 'fp', lease), 'started');
    await store.complete('void', first.token, undefined);
    await store.complete('null', second.token, null);

    expect(await store.begin('void', 'fp', lease)).toEqual({ state: 'completed', result: undefined });
    expect(await store.begin('null', 'fp', lease)).toEqual({ state: 'completed', result: null });
  });

  it('replays a stored permanent failure', async () => {
    const { token } = expectState(await store.begin('k', 'fp', lease), 'started');
    const failure = { code: 'PERMISSION_DENIED', message: 'No access to account 7.', hint: 'Ask for access.' };
    await store.fail('k', token, failure);

    expect(await store.begin('k', 'fp', lease)).toEqual({ state: 'failed', error: failure });
  });

  it('starts the key afresh after release', async () => {
    const first = expectState(await store.begin('k', 'fp', lease), 'started');
    expect(await store.release('k', first.token)).toBe(true);

    const second = expectState(await store.begin('k', 'fp', { owner: 'worker-b', leaseMs: 1_000 }), 'started');

    expect(second.token).not.toBe(first.token);
  });

  it('reports a conflict with the stored fingerprint before any other state', async () => {
    const inFlight = expectState(await store.begin('live', 'fp-1', lease), 'started');
    const done = expectState(await store.begin('done', 'fp-1', lease), 'started');
    const failed = expectState(await store.begin('failed', 'fp-1', lease), 'started');
    const stale = expectState(await store.begin('stale', 'fp-1', lease), 'started');
    await store.complete('done', done.token, 42);
    await store.fail('failed', failed.token, { code: 'INVALID', message: 'no' });
    now += 500;
    expect(await store.heartbeat('live', inFlight.token, 10_000)).toBe(true);
    now += 1_000; // the lease of 'stale' ran out; a different fingerprint must not take it over

    for (const key of ['live', 'done', 'failed', 'stale']) {
      expect(await store.begin(key, 'fp-2', lease)).toEqual({ state: 'conflict', storedFingerprint: 'fp-1' });
    }
    expect(await store.heartbeat('stale', stale.token)).toBe(true);
  });

  it('reports in_flight with the holder and its lease while the lease is live', async () => {
    expectState(await store.begin('k', 'fp', lease), 'started');
    now += 999;

    await expectHeldByWorkerA(start + 1_000, 1);
  });

  it('keeps a key whose lease ran out in flight during the takeover grace, then hands it over', async () => {
    expectState(await store.begin('k', 'fp', lease), 'started');
    const graced = { owner: 'worker-b', leaseMs: 1_000, takeoverGraceMs: 3_000 };
    now += 2_500;

    expect(await store.begin('k', 'fp', graced)).toEqual({
      state: 'in_flight',
      owner: 'worker-a',
      leaseExpiresAt: start + 1_000,
      retryAfterMs: 1_500,
    });
    now += 1_500;
    expect(await store.begin('k', 'fp', graced)).toMatchObject({ state: 'outcome_unknown', previousOwner: 'worker-a' });
  });

  it('gives every new owner of a key a larger fencing token', async () => {
    const first = expectState(await store.begin('k', 'fp', lease), 'started');
    now += 1_000;
    const second = expectState(await store.begin('k', 'fp', { owner: 'worker-b' }), 'outcome_unknown');
    now += 31_000;
    const third = expectState(await store.begin('k', 'fp', { owner: 'worker-c' }), 'outcome_unknown');
    await store.release('k', third.token);
    now += 1;
    const fourth = expectState(await store.begin('k', 'fp', { owner: 'worker-d' }), 'started');

    const tokens = [first, second, third, fourth].map((o) => Number(o.fencingToken));
    expect(tokens).toEqual([...tokens].sort((a, b) => a - b));
    expect(new Set(tokens).size).toBe(4);
  });

  it('hands a key whose lease expired to the next caller as outcome_unknown with a new token', async () => {
    const first = expectState(await store.begin('k', 'fp', lease), 'started');
    now += 1_000;

    const takeover = expectState(
      await store.begin('k', 'fp', { owner: 'worker-b', leaseMs: 2_000 }),
      'outcome_unknown',
    );

    expect(takeover).toEqual({
      state: 'outcome_unknown',
      token: expect.any(String),
      previousOwner: 'worker-a',
      leaseExpiresAt: now + 2_000,
      takeovers: 1,
      fencingToken: String(now),
    });
    expect(takeover.token).not.toBe(first.token);
    expect(await store.begin('k', 'fp', { owner: 'worker-c' })).toMatchObject({
      state: 'in_flight',
      owner: 'worker-b',
    });
  });

  it('fences the old token after a takeover', async () => {
    const first = expectState(await store.begin('k', 'fp', lease), 'started');
    now += 1_001;
    const second = expectState(await store.begin('k', 'fp', { owner: 'worker-b' }), 'outcome_unknown');

    expect(await store.heartbeat('k', first.token)).toBe(false);
    expect((await rejection(store.complete('k', first.token, 'late'))).code).toBe('LEASE_LOST');
    expect((await rejection(store.fail('k', first.token, { code: 'X', message: 'late' }))).code).toBe('LEASE_LOST');
    expect(await store.release('k', first.token)).toBe(false);

    await store.complete('k', second.token, 'on time');
    expect(await store.begin('k', 'fp', lease)).toEqual({ state: 'completed', result: 'on time' });
  });

  it('counts successive takeovers of a key', async () => {
    expectState(await store.begin('k', 'fp', lease), 'started');
    now += 1_000;
    expectState(await store.begin('k', 'fp', { owner: 'worker-b', leaseMs: 1_000 }), 'outcome_unknown');
    now += 1_000;

    expect(await store.begin('k', 'fp', { owner: 'worker-c' })).toMatchObject({
      state: 'outcome_unknown',
      previousOwner: 'worker-b',
      takeovers: 2,
    });
  });

  it('lets a holder whose lease ran out complete while nobody has taken the key over', async () => {
    const { token } = expectState(await store.begin('k', 'fp', lease), 'started');
    now += 5_000;

    await store.complete('k', token, 'slow but sole');

    expect(await store.begin('k', 'fp', lease)).toEqual({ state: 'completed', result: 'slow but sole' });
  });

  it('extends the lease with heartbeat so that the key stays in flight past the first lease', async () => {
    const { token } = expectState(await store.begin('k', 'fp', lease), 'started');
    now += 800;
    expect(await store.heartbeat('k', token, 1_000)).toBe(true);
    now += 800;

    await expectHeldByWorkerA(start + 1_800, 200);
  });

  it('refuses a heartbeat from a token that never owned the key', async () => {
    expectState(await store.begin('k', 'fp', lease), 'started');

    expect(await store.heartbeat('k', 'not-the-token')).toBe(false);
    expect(await store.heartbeat('unknown-key', 'not-the-token')).toBe(false);
  });

  it('treats a repeated complete with the same token as a no-op that keeps the first result', async () => {
    const { token } = expectState(await store.begin('k', 'fp', lease), 'started');
    await store.complete('k', token, 'first');

    await store.complete('k', token, 'second');

    expect(await store.begin('k', 'fp', lease)).toEqual({ state: 'completed', result: 'first' });
    expect((await rejection(store.fail('k', token, { code: 'X', message: 'x' }))).code).toBe('LEASE_LOST');
  });

  it('reaps only the records past retention', async () => {
    const retention = IDEMPOTENCY_DEFAULTS.retentionMs;
    const oldDone = expectState(await store.begin('old-done', 'fp', lease), 'started');
    await store.complete('old-done', oldDone.token, 'old');
    expectState(await store.begin('old-abandoned', 'fp', lease), 'started');
    now += retention;
    const recentDone = expectState(await store.begin('recent-done', 'fp', lease), 'started');
    await store.complete('recent-done', recentDone.token, 'recent');
    expectState(await store.begin('stale-in-retention', 'fp', lease), 'started');
    const live = expectState(await store.begin('live', 'fp', { owner: 'worker-a', leaseMs: 60_000 }), 'started');
    now += 1_000;

    expect(await store.reap()).toBe(2);

    expect(await store.reap()).toBe(0);
    expect(await store.begin('recent-done', 'fp', lease)).toEqual({ state: 'completed', result: 'recent' });
    expect(await store.begin('stale-in-retention', 'fp', lease)).toMatchObject({ state: 'outcome_unknown' });
    expect(await store.heartbeat('live', live.token)).toBe(true);
    expect(await store.begin('old-done', 'fp', lease)).toMatchObject({ state: 'started' });
    expect(await store.begin('old-abandoned', 'fp', lease)).toMatchObject({ state: 'started' });
  });

  it('reaps with an explicit time', async () => {
    const { token } = expectState(await store.begin('k', 'fp', lease), 'started');
    await store.complete('k', token, 1);

    expect(await store.reap(now + IDEMPOTENCY_DEFAULTS.retentionMs - 1)).toBe(0);
    expect(await store.reap(now + IDEMPOTENCY_DEFAULTS.retentionMs)).toBe(1);
  });

  it('keeps a completed record for 24 hours by default and forgets it after', async () => {
    const { token } = expectState(await store.begin('k', 'fp', lease), 'started');
    await store.complete('k', token, 'kept');
    now += 24 * 60 * 60 * 1000 - 1;
    expect(await store.begin('k', 'fp-other', lease)).toMatchObject({ state: 'conflict' });
    expect(await store.begin('k', 'fp', lease)).toMatchObject({ state: 'completed', result: 'kept' });
    now += 1;

    expect(await store.begin('k', 'fp-other', lease)).toMatchObject({ state: 'started' });
  });

  it('honours a configured retention', async () => {
    const short = backend.open({ clock: () => now, retentionMs: 5_000 });
    opened.push(short);
    const { token } = expectState(await short.begin('k', 'fp', lease), 'started');
    await short.complete('k', token, 'brief');
    now += 5_000;

    expect(await short.reap()).toBe(1);
    expect(await short.begin('k', 'fp', lease)).toMatchObject({ state: 'started' });
  });

  it('keeps a result completed with its own retention until that retention ends, then reaps it', async () => {
    const thirtyDays = 30 * 24 * 60 * 60 * 1000;
    const { token } = expectState(await store.begin('k', 'fp', lease), 'started');
    await store.complete('k', token, 'kept', { retentionMs: thirtyDays });
    now += thirtyDays - 1;

    expect(await store.reap()).toBe(0);
    expect(await store.begin('k', 'fp', lease)).toEqual({ state: 'completed', result: 'kept' });
    now += 1;
    expect(await store.reap()).toBe(1);
    expect(await store.begin('k', 'fp', lease)).toMatchObject({ state: 'started' });
  });

  it('keeps a failure stored with its own retention until that retention ends, then reaps it', async () => {
    const tenMinutes = 10 * 60 * 1000;
    const { token } = expectState(await store.begin('k', 'fp', lease), 'started');
    await store.fail('k', token, { code: 'DENIED', message: 'No.' }, { retentionMs: tenMinutes });
    now += tenMinutes - 1;

    expect(await store.begin('k', 'fp', lease)).toMatchObject({ state: 'failed', error: { code: 'DENIED' } });
    now += 1;
    expect(await store.reap()).toBe(1);
    expect(await store.begin('k', 'fp', lease)).toMatchObject({ state: 'started' });
  });

  it('refuses a record retention that is not a positive number of ms up to 10 years and keeps the key', async () => {
    const { token } = expectState(await store.begin('k', 'fp', lease), 'started');
    for (const retentionMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '30d' as unknown as number]) {
      expect((await rejection(store.complete('k', token, 'x', { retentionMs }))).code).toBe('INVALID_ARGUMENT');
    }
    const tooLong = IDEMPOTENCY_DEFAULTS.maxRecordRetentionMs + 1;
    expect((await rejection(store.fail('k', token, { code: 'X', message: 'x' }, { retentionMs: tooLong }))).code).toBe(
      'INVALID_ARGUMENT',
    );

    expect(await store.heartbeat('k', token)).toBe(true);
    await store.complete('k', token, 'after all');
    expect(await store.begin('k', 'fp', lease)).toEqual({ state: 'completed', result: 'after all' });
  });

  it('rejects a result that is not JSON and keeps the key in progress', async () => {
    const { token } = expectState(await store.begin('k', 'fp', lease), 'started');

    expect((await rejection(store.complete('k', token, { n: NaN }))).code).toBe('NOT_JSON');
    expect((await rejection(store.complete('k', token, { f: () => 1 }))).code).toBe('NOT_JSON');
    expect((await rejection(store.complete('k', token, 10n))).code).toBe('NOT_JSON');

    expect(await store.begin('k', 'fp', { owner: 'worker-b' })).toMatchObject({ state: 'in_flight' });
  });

  it('rejects an empty or oversized key with INVALID_KEY', async () => {
    expect((await rejection(store.begin('', 'fp', lease))).code).toBe('INVALID_KEY');
    expect((await rejection(store.begin('k'.repeat(2049), 'fp', lease))).code).toBe('INVALID_KEY');
  });

  it('rejects a lease that is not a positive duration', async () => {
    expect((await rejection(store.begin('k', 'fp', { owner: 'w', leaseMs: 0 }))).code).toBe('INVALID_ARGUMENT');
    expect((await rejection(store.begin('k', 'fp', { owner: 'w', leaseMs: NaN }))).code).toBe('INVALID_ARGUMENT');
  });

  it('throws STORE_CLOSED once closed', async () => {
    await store.close();

    expect((await rejection(store.begin('k', 'fp', lease))).code).toBe('STORE_CLOSED');
    await store.close();
  });
});

describe.each(backends)('stale leases in the $name idempotency store (real time)', (backend) => {
  // Generous real-time margins: a loaded machine (load ~25 on 2 cores) can stall a process for a second or more.
  const leaseMs = 3_000;
  const heartbeatEveryMs = 500;
  let store: IdempotencyStore;

  beforeEach(() => {
    store = backend.open();
    opened.push(store);
  });

  afterEach(async () => {
    await store.close();
  });

  /** Calls begin every 10 ms until it returns something other than in_flight or `untilMs` passes. */
  async function pollBegin(key: string, untilMs: number): Promise<{ outcome: BeginOutcome; at: number }> {
    for (;;) {
      const outcome = await store.begin(key, 'fp', { owner: 'rescuer', leaseMs });
      const at = Date.now();
      if (outcome.state !== 'in_flight' || at >= untilMs) return { outcome, at };
      await sleep(10);
    }
  }

  it('reclaims the key of a holder that stopped heartbeating once its lease has run out, not before', async () => {
    const key = randomUUID();
    const { token } = expectState(await store.begin(key, 'fp', { owner: 'crasher', leaseMs }), 'started');
    await sleep(heartbeatEveryMs);
    const beforeLastHeartbeat = Date.now(); // the lease runs out no earlier than 300 ms after this
    expect(await store.heartbeat(key, token, leaseMs)).toBe(true);
    const lastHeartbeat = Date.now(); // the holder "crashes" here

    // Polls until reclaimed (the bound is only how long to wait on a stalled machine, not a claim about time):
    // how soon after the lease a reclaim comes depends on the load; that it never comes before is the contract.
    const { outcome, at } = await pollBegin(key, lastHeartbeat + 20 * leaseMs);

    expect(outcome).toMatchObject({ state: 'outcome_unknown', previousOwner: 'crasher' });
    expect(at - beforeLastHeartbeat).toBeGreaterThanOrEqual(leaseMs);
    expect(await store.heartbeat(key, token, leaseMs)).toBe(false);
  });

  it('never reclaims the key of a holder that keeps heartbeating', async () => {
    const key = randomUUID();
    const { token } = expectState(await store.begin(key, 'fp', { owner: 'alive', leaseMs }), 'started');
    let beating = true;
    const heartbeats = (async () => {
      while (beating) {
        await sleep(heartbeatEveryMs);
        if (!(await store.heartbeat(key, token, leaseMs))) return false;
      }
      return true;
    })();

    // Two whole leases: a holder whose heartbeats stopped counting would have been reclaimed by then.
    const { outcome } = await pollBegin(key, Date.now() + 2 * leaseMs);
    beating = false;

    expect(outcome).toMatchObject({ state: 'in_flight', owner: 'alive' });
    expect(await heartbeats).toBe(true);
    await store.complete(key, token, 'done');
  });
});
