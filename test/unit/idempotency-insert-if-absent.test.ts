import {
  IdempotencyStoreError,
  type IdempotencyStore,
  type InsertOutcome,
  type LookupOutcome,
} from '../../src/stores/idempotency';
import { idempotencyStoreBackends } from '../support/idempotency-store-backends';

/** A store with `lookup` and `insertIfAbsent` (all the built-in ones). */
type InsertingStore = IdempotencyStore & Required<Pick<IdempotencyStore, 'lookup' | 'insertIfAbsent'>>;

const stores = idempotencyStoreBackends<InsertingStore>('insert');
const backends = stores.backends;

afterAll(() => stores.close());

describe.each(backends)('insertIfAbsent on the $name idempotency store', (backend) => {
  const start = 1_800_000_000_000;
  let now = start;
  let place: number;
  let store: InsertingStore;
  const lease = { owner: 'worker-a', leaseMs: 1_000 };

  function open(): InsertingStore {
    return backend.open(place, { clock: () => now, retentionMs: 60_000 });
  }

  beforeEach(() => {
    now = start;
    place = stores.nextPlace();
    store = open();
  });

  it('finds a new key absent and writes nothing', async () => {
    expect(await store.lookup('k', 'fp')).toEqual<LookupOutcome>({ state: 'absent' });
    expect(await store.lookup('k', 'fp')).toEqual<LookupOutcome>({ state: 'absent' });
    expect(await store.begin('k', 'fp', lease)).toMatchObject({ state: 'started' });
  });

  it('inserts the result of a new key, which later lookups and begins replay', async () => {
    expect(await store.insertIfAbsent('k', 'fp', { text: 'first', n: [1, 2] })).toEqual<InsertOutcome>({
      state: 'inserted',
    });

    const replay = { state: 'completed', result: { text: 'first', n: [1, 2] } };
    expect(await store.lookup('k', 'fp')).toEqual(replay);
    expect(await store.begin('k', 'fp', { owner: 'worker-b' })).toEqual(replay);
  });

  it('keeps the first result: a second insert writes nothing and returns the stored one', async () => {
    await store.insertIfAbsent('k', 'fp', 'first');

    expect(await store.insertIfAbsent('k', 'fp', 'second')).toEqual({ state: 'completed', result: 'first' });
    expect(await store.lookup('k', 'fp')).toEqual({ state: 'completed', result: 'first' });
  });

  it('lets exactly one of many concurrent inserts win, and gives every other one the winner', async () => {
    const stores = [store, open(), open()];
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, i) => stores[i % stores.length]!.insertIfAbsent('k', 'fp', `answer ${i}`)),
    );

    const winners = outcomes.flatMap((outcome, i) => (outcome.state === 'inserted' ? [`answer ${i}`] : []));
    expect(winners).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.state !== 'inserted')).toEqual(
      Array.from({ length: 11 }, () => ({ state: 'completed', result: winners[0] })),
    );
  });

  it('lets exactly one of many concurrent inserts take over a key whose lease ran out', async () => {
    const claim = await store.begin('k', 'fp', lease);
    if (claim.state !== 'started') throw new Error(claim.state);
    now += 1_000;
    const stores = [store, open(), open()];
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, i) => stores[i % stores.length]!.insertIfAbsent('k', 'fp', `answer ${i}`)),
    );

    const winners = outcomes.flatMap((outcome, i) => (outcome.state === 'inserted' ? [`answer ${i}`] : []));
    expect(winners).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.state !== 'inserted')).toEqual(
      Array.from({ length: 11 }, () => ({ state: 'completed', result: winners[0] })),
    );
  });

  it('replays an undefined result as undefined', async () => {
    await store.insertIfAbsent('k', 'fp', undefined);

    expect(await store.lookup('k', 'fp')).toEqual({ state: 'completed', result: undefined });
  });

  it('refuses a result that is not JSON with NOT_JSON and stores nothing', async () => {
    const error = await store.insertIfAbsent('k', 'fp', { n: 1n }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(IdempotencyStoreError);
    expect((error as IdempotencyStoreError).code).toBe('NOT_JSON');
    expect(await store.lookup('k', 'fp')).toEqual({ state: 'absent' });
  });

  it('answers conflict for a key stored with another fingerprint, writing nothing', async () => {
    await store.insertIfAbsent('k', 'fp-1', 'first');

    expect(await store.insertIfAbsent('k', 'fp-2', 'second')).toEqual({
      state: 'conflict',
      storedFingerprint: 'fp-1',
    });
    expect(await store.lookup('k', 'fp-1')).toEqual({ state: 'completed', result: 'first' });
  });

  it('replays a stored permanent failure instead of inserting', async () => {
    const claim = await store.begin('k', 'fp', lease);
    if (claim.state !== 'started') throw new Error(claim.state);
    await store.fail('k', claim.token, { code: 'DENIED', message: 'No.' });

    expect(await store.insertIfAbsent('k', 'fp', 'x')).toEqual({
      state: 'failed',
      error: { code: 'DENIED', message: 'No.' },
    });
  });

  it('answers in_flight for a key under a live lease, writing nothing', async () => {
    const claim = await store.begin('k', 'fp', lease);
    if (claim.state !== 'started') throw new Error(claim.state);
    now += 400;

    const held = { state: 'in_flight', owner: 'worker-a', leaseExpiresAt: start + 1_000, retryAfterMs: 600 };
    expect(await store.lookup('k', 'fp')).toEqual(held);
    expect(await store.insertIfAbsent('k', 'fp', 'x')).toEqual(held);
    await expect(store.complete('k', claim.token, 'holder')).resolves.toBeUndefined();
  });

  it("takes a key whose lease ran out, and fences its holder off: the holder's complete is LEASE_LOST", async () => {
    const claim = await store.begin('k', 'fp', lease);
    if (claim.state !== 'started') throw new Error(claim.state);
    now += 1_000;

    expect(await store.lookup('k', 'fp')).toEqual({ state: 'absent' });
    expect(await store.insertIfAbsent('k', 'fp', 'inserted')).toEqual({ state: 'inserted' });
    const error = await store.complete('k', claim.token, 'holder').catch((e: unknown) => e);
    expect((error as IdempotencyStoreError).code).toBe('LEASE_LOST');
    expect(await store.lookup('k', 'fp')).toEqual({ state: 'completed', result: 'inserted' });
  });

  it('treats a record past retention as absent, whatever its fingerprint', async () => {
    await store.insertIfAbsent('k', 'fp-old', 'old');
    now += 60_000;

    expect(await store.lookup('k', 'fp-new')).toEqual({ state: 'absent' });
    expect(await store.insertIfAbsent('k', 'fp-new', 'new')).toEqual({ state: 'inserted' });
    expect(await store.lookup('k', 'fp-new')).toEqual({ state: 'completed', result: 'new' });
  });

  it("keeps an inserted record for the store's retention, or for its own", async () => {
    await store.insertIfAbsent('store', 'fp', 1);
    await store.insertIfAbsent('own', 'fp', 2, { retentionMs: 120_000 });
    now += 60_000;

    expect(await store.lookup('store', 'fp')).toEqual({ state: 'absent' });
    expect(await store.lookup('own', 'fp')).toEqual({ state: 'completed', result: 2 });
  });
});
