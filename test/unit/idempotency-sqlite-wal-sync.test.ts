import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IdempotencyStoreError } from '../../src/stores/idempotency';
import { SqliteIdempotencyStore } from '../../src/stores/idempotency/sqlite-idempotency-store';

/**
 * The SQLite store's group commit with `synchronous=FULL` syncs the WAL off the event loop: the group commits
 * without SQLite's own fsync, then the WAL file is `fdatasync`ed on libuv's thread pool, and each write of the
 * group resolves only once that sync is done. The worker's JavaScript thread goes on meanwhile.
 */

const dir = mkdtempSync(join(tmpdir(), 'sqlite-wal-sync-'));
let n = 0;
const pathOf = () => join(dir, `keys-${++n}.sqlite`);
const lease = { owner: 'worker-a', leaseMs: 10_000 };

/** The store's WAL sync, replaced by one the test releases. */
interface Internals {
  syncWal: () => Promise<void>;
}

/** Replaces the store's WAL sync: each call waits until the test calls `release` (or `fail`). */
function holdWalSyncs(store: SqliteIdempotencyStore) {
  const internals = store as unknown as Internals;
  const real = internals.syncWal.bind(store);
  const held: Array<{ release: () => void; fail: (error: Error) => void }> = [];
  internals.syncWal = () =>
    new Promise<void>((resolve, reject) => {
      held.push({ release: () => void real().then(resolve, reject), fail: reject });
    });
  return held;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

function rowsIn(path: string): number {
  const other = new Database(path, { readonly: true });
  try {
    return (other.prepare('SELECT count(*) AS n FROM idempotency_keys').get() as { n: number }).n;
  } finally {
    other.close();
  }
}

test('a claim is committed at once and resolves only after the WAL sync that follows its commit', async () => {
  const path = pathOf();
  const store = new SqliteIdempotencyStore({ path });
  const held = holdWalSyncs(store);
  let resolved = false;
  const claim = store.begin('run-1/1', 'fp', lease).then((outcome) => {
    resolved = true;
    return outcome;
  });
  while (held.length === 0) await tick();
  // Committed (another connection reads it), not yet durable: the caller is still waiting, the event loop is not.
  expect(rowsIn(path)).toBe(1);
  await tick();
  expect(resolved).toBe(false);
  held[0]!.release();
  expect((await claim).state).toBe('started');
  await store.close();
});

test('groups that commit while a sync runs share the next sync, which begins when that one ends', async () => {
  const store = new SqliteIdempotencyStore({ path: pathOf() });
  // The WAL's file handle, replaced by one whose fdatasyncs the test counts and releases.
  const datasyncs: Array<() => void> = [];
  const handle = {
    datasync: () => new Promise<void>((resolve) => datasyncs.push(resolve)),
    close: async () => undefined,
  };
  (store as unknown as { wal: Promise<unknown> }).wal = Promise.resolve(handle);
  const first = store.begin('run-1/1', 'fp', lease);
  while (datasyncs.length === 0) await tick();
  const second = store.begin('run-2/1', 'fp', lease);
  await tick();
  const third = store.begin('run-3/1', 'fp', lease);
  await tick();
  await tick();
  expect(datasyncs).toHaveLength(1);
  datasyncs[0]!();
  expect((await first).state).toBe('started');
  while (datasyncs.length === 1) await tick();
  datasyncs[1]!();
  expect([(await second).state, (await third).state]).toEqual(['started', 'started']);
  expect(datasyncs).toHaveLength(2);
  await store.close();
});

test('a WAL sync that fails fails every write of its group as STORE_UNAVAILABLE', async () => {
  const store = new SqliteIdempotencyStore({ path: pathOf() });
  const held = holdWalSyncs(store);
  const claims = Promise.allSettled([store.begin('a/1', 'fp', lease), store.begin('b/1', 'fp', lease)]);
  while (held.length === 0) await tick();
  held[0]!.fail(new Error('EIO: the disk is gone'));
  const settled = await claims;
  for (const result of settled) {
    expect(result.status).toBe('rejected');
    const error = (result as PromiseRejectedResult).reason as IdempotencyStoreError;
    expect(error).toBeInstanceOf(IdempotencyStoreError);
    expect(error.code).toBe('STORE_UNAVAILABLE');
  }
  await store.close();
});

test('writes made durable with the next commit need no sync of their own', async () => {
  const store = new SqliteIdempotencyStore({ path: pathOf() });
  const held = holdWalSyncs(store);
  await store.insertIfAbsent('wf/r1/turn/1', 'model-turn', { text: 'hi' }, { durableWithNextCommit: true });
  expect(held).toHaveLength(0);
  await store.close();
});

test('the real sync: a claim survives the store closing and another store opening the file', async () => {
  const path = pathOf();
  const store = new SqliteIdempotencyStore({ path });
  const started = await store.begin('run-1/1', 'fp', lease);
  expect(started.state).toBe('started');
  await store.close();
  const again = new SqliteIdempotencyStore({ path });
  expect((await again.begin('run-1/1', 'fp', { ...lease, owner: 'worker-b' })).state).toBe('in_flight');
  await again.close();
});

test('syncOffEventLoop: false keeps the fsync inside the commit; so do NORMAL stores and stores without group commit', async () => {
  for (const options of [{ syncOffEventLoop: false }, { synchronous: 'NORMAL' as const }, { groupCommit: false }]) {
    const store = new SqliteIdempotencyStore({ path: pathOf(), ...options });
    const held = holdWalSyncs(store);
    expect((await store.begin('run-1/1', 'fp', lease)).state).toBe('started');
    expect(held).toHaveLength(0);
    await store.close();
  }
});
