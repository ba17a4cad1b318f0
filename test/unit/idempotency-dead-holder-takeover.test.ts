import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { EncryptedIdempotencyStore } from '../../src/encryption/encrypted-idempotency-store';
import {
  IdempotencyStoreError,
  MemoryIdempotencyStore,
  PostgresIdempotencyStore,
  SqliteIdempotencyStore,
  type BeginOutcome,
  type IdempotencyStore,
  type IdempotencyStoreBaseOptions,
} from '../../src/stores/idempotency';
import { keyEntry, keyringOf } from '../support/encryption-keys';

/**
 * `takeOverDeadHolder` (docs/exactly-once.md, "Dead-holder takeover"): a key still held by the owner the caller
 * proved dead is taken over at once, fenced so that of two takers exactly one wins, and a key held by anyone
 * else is decided as `begin` decides it.
 */

const POSTGRES_URL = process.env.DURABLE_TOOLS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SCHEMA = `idem_dead_${process.pid}_${Date.now().toString(36)}`;
const tempDir = mkdtempSync(join(tmpdir(), 'idem-dead-'));
const opened: IdempotencyStore[] = [];
let counter = 0;

type TakingStore = IdempotencyStore & Required<Pick<IdempotencyStore, 'takeOverDeadHolder'>>;

interface Backend {
  name: string;
  /** Opens a store on place `place` (a file or a table): two stores on one place share their records. */
  open(place: number, options?: IdempotencyStoreBaseOptions): TakingStore;
}

const memoryPlaces = new Map<number, MemoryIdempotencyStore>();
const keyring = keyringOf(keyEntry('k1'));

const backends: Backend[] = [
  {
    name: 'memory',
    open: (place, options) => {
      const store = memoryPlaces.get(place) ?? new MemoryIdempotencyStore(options);
      memoryPlaces.set(place, store);
      return store;
    },
  },
  {
    name: 'sqlite',
    open: (place, options) => new SqliteIdempotencyStore({ ...options, path: join(tempDir, `s${place}.sqlite`) }),
  },
  {
    name: 'postgres',
    open: (place, options) =>
      new PostgresIdempotencyStore({
        ...options,
        connectionString: POSTGRES_URL,
        schema: SCHEMA,
        table: `t${place}`,
        poolSize: 4,
      }),
  },
  {
    name: 'encrypted sqlite',
    open: (place, options) =>
      new EncryptedIdempotencyStore(
        new SqliteIdempotencyStore({ ...options, path: join(tempDir, `e${place}.sqlite`) }),
        keyring,
      ) as TakingStore,
  },
];

afterAll(async () => {
  await Promise.all(opened.map((store) => store.close()));
  const admin = new Pool({ connectionString: POSTGRES_URL, max: 1 });
  await admin.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await admin.end();
  rmSync(tempDir, { recursive: true, force: true });
});

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
    const opening = backend.open(place, { clock: () => now, retentionMs: 600_000 });
    opened.push(opening);
    return opening;
  }

  beforeEach(() => {
    now = start;
    place = ++counter;
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
