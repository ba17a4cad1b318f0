import { IdempotencyStoreError, type BeginOutcome, type IdempotencyStore } from '../../src/stores/idempotency';
import { idempotencyStoreBackends } from '../support/idempotency-store-backends';

/**
 * `takeOverDeadHolder` (docs/exactly-once.md, "Dead-holder takeover"): a key still held by the owner the caller
 * proved dead is taken over at once, fenced so that of two takers exactly one wins, and a key held by anyone
 * else is decided as `begin` decides it.
 */

type TakingStore = IdempotencyStore & Required<Pick<IdempotencyStore, 'takeOverDeadHolder'>>;

const stores = idempotencyStoreBackends<TakingStore>('dead', { encrypted: true });
const backends = stores.backends;

afterAll(() => stores.close());

function expectState<S extends BeginOutcome['state']>(
  outcome: BeginOutcome,
  state: S,
): Extract<BeginOutcome, { state: S }> {
  expect(outcome.state).toBe(state);
  return outcome as Extract<BeginOutcome, { state: S }>;
}

describe.each(backends)('takeOverDeadHolder on the $name idempotency store', (backend) => {
  const start = 1_800_000_000_000;
  let now = start;
  let place: number;
  let store: TakingStore;
  const dead = 'host:1/holder=linux:dead/attempt-1';
  const claim = { owner: dead, leaseMs: 10_000, takeoverGraceMs: 30_000 };
  const taker = (owner: string) => ({ owner, leaseMs: 10_000, takeoverGraceMs: 30_000, deadOwner: dead });

  function open(): TakingStore {
    return backend.open(place, { clock: () => now, retentionMs: 600_000 });
  }

  beforeEach(() => {
    now = start;
    place = stores.nextPlace();
    store = open();
  });

  it('takes a dead holder’s key over at once, with a new fencing token, and fences the dead token off', async () => {
    const held = expectState(await store.begin('k', 'fp', claim), 'started');
    now += 100;
    expectState(await store.begin('k', 'fp', { ...claim, owner: 'b' }), 'in_flight');

    const taken = expectState(await store.takeOverDeadHolder('k', 'fp', taker('b')), 'outcome_unknown');

    expect(taken).toMatchObject({ previousOwner: dead, previousHolderDead: true, takeovers: 1 });
    expect(Number(taken.fencingToken)).toBeGreaterThan(Number(held.fencingToken));
    expect(await store.heartbeat('k', held.token)).toBe(false);
    await expect(store.complete('k', held.token, 'late')).rejects.toMatchObject({ code: 'LEASE_LOST' });
    await store.complete('k', taken.token, 'adopted');
    expect(await store.begin('k', 'fp', { owner: 'c' })).toEqual({ state: 'completed', result: 'adopted' });
  });

  it('lets exactly one of two takers on two stores win; the other is told the winner holds the key', async () => {
    expectState(await store.begin('k', 'fp', claim), 'started');
    const other = open();

    const outcomes = await Promise.all([
      store.takeOverDeadHolder('k', 'fp', taker('b')),
      other.takeOverDeadHolder('k', 'fp', taker('c')),
    ]);

    const winners = outcomes.filter((outcome) => outcome.state === 'outcome_unknown');
    expect(winners).toHaveLength(1);
    const loser = outcomes.find((outcome) => outcome.state !== 'outcome_unknown');
    const winnerOwner = outcomes[0] === winners[0] ? 'b' : 'c';
    expect(loser).toMatchObject({ state: 'in_flight', owner: winnerOwner });
  });

  it('never takes over a key held by another owner than the one proved dead', async () => {
    expectState(await store.begin('k', 'fp', { ...claim, owner: 'alive' }), 'started');

    const outcome = await store.takeOverDeadHolder('k', 'fp', taker('b'));

    expect(outcome).toMatchObject({ state: 'in_flight', owner: 'alive' });
    expect(outcome).not.toHaveProperty('previousHolderDead');
  });

  it('decides a finished, new or conflicting key exactly as begin does', async () => {
    expectState(await store.takeOverDeadHolder('new', 'fp', taker('b')), 'started');
    const held = expectState(await store.begin('done', 'fp', claim), 'started');
    await store.complete('done', held.token, 42);

    expect(await store.takeOverDeadHolder('done', 'fp', taker('b'))).toEqual({ state: 'completed', result: 42 });
    expectState(await store.takeOverDeadHolder('done', 'other', taker('b')), 'conflict');
  });

  it('refuses a missing deadOwner', async () => {
    const options = { owner: 'b', deadOwner: '' };
    await expect(store.takeOverDeadHolder('k', 'fp', options)).rejects.toBeInstanceOf(IdempotencyStoreError);
  });
});
