import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteIdempotencyStore } from '../../src/stores/idempotency/sqlite-idempotency-store';

/**
 * `insertIfAbsent(…, { durableWithNextCommit: true })` (a model turn's record) and `complete(…, { durableWithNextCommit:
 * true })` (a tool call's result) on the SQLite store: the write commits without an fsync of its own, and the
 * connection goes back to its own `synchronous` mode, so the next claim of a key (before any effect) commits
 * with an fsync that makes the record durable too.
 */

const dir = mkdtempSync(join(tmpdir(), 'sqlite-deferred-sync-'));
let n = 0;
const pathOf = () => join(dir, `keys-${++n}.sqlite`);

/** The store connection's `synchronous` mode: 1 NORMAL, 2 FULL. */
function synchronousOf(store: SqliteIdempotencyStore): number {
  const { db } = store as unknown as { db: Database.Database };
  return db.pragma('synchronous', { simple: true }) as number;
}

test('an insert made durable with the next commit is committed at once: another connection reads it', async () => {
  const path = pathOf();
  const store = new SqliteIdempotencyStore({ path });
  const outcome = await store.insertIfAbsent(
    'wf/r1/turn/1',
    'model-turn',
    { text: 'hi' },
    { durableWithNextCommit: true },
  );
  expect(outcome).toEqual({ state: 'inserted' });
  const other = new Database(path, { readonly: true });
  const row = other.prepare('SELECT state, result_json FROM idempotency_keys WHERE key = ?').get('wf/r1/turn/1');
  other.close();
  expect(row).toEqual({ state: 'completed', result_json: '{"text":"hi"}' });
  await store.close();
});

test('the connection is back to synchronous=FULL after such an insert, for the claims that follow', async () => {
  // A store that fsyncs inside SQLite's commits (the default syncs the WAL itself, below).
  const store = new SqliteIdempotencyStore({ path: pathOf(), syncOffEventLoop: false });
  expect(synchronousOf(store)).toBe(2);
  await store.insertIfAbsent('k1', 'fp', 1, { durableWithNextCommit: true });
  expect(synchronousOf(store)).toBe(2);
  // Also when the key had a record and the insert went through the read-and-decide transaction.
  await store.insertIfAbsent('k1', 'fp', 2, { durableWithNextCommit: true });
  expect(synchronousOf(store)).toBe(2);
  await store.close();
});

test('a completion made durable with the next commit is committed at once, and the next claim syncs again', async () => {
  const path = pathOf();
  const store = new SqliteIdempotencyStore({ path, syncOffEventLoop: false });
  const claim = await store.begin('wf/r1/1', 'fp', { owner: 'me' });
  if (claim.state !== 'started') throw new Error(`claim was ${claim.state}`);
  await store.complete('wf/r1/1', claim.token, { paid: 1 }, { durableWithNextCommit: true });
  expect(synchronousOf(store)).toBe(2);
  const other = new Database(path, { readonly: true });
  const row = other.prepare('SELECT state, result_json FROM idempotency_keys WHERE key = ?').get('wf/r1/1');
  other.close();
  expect(row).toEqual({ state: 'completed', result_json: '{"paid":1}' });
  expect(await store.begin('wf/r1/1', 'fp', { owner: 'me' })).toEqual({ state: 'completed', result: { paid: 1 } });
  await store.close();
});

test('a store opened with synchronous=NORMAL stays NORMAL', async () => {
  const store = new SqliteIdempotencyStore({ path: pathOf(), synchronous: 'NORMAL' });
  await store.insertIfAbsent('k1', 'fp', 1, { durableWithNextCommit: true });
  expect(synchronousOf(store)).toBe(1);
  await store.close();
});

test('a store that syncs the WAL itself keeps its connection at NORMAL, and its next claim waits for a WAL sync', async () => {
  const store = new SqliteIdempotencyStore({ path: pathOf() });
  const internals = store as unknown as { syncWal: () => Promise<void> };
  const real = internals.syncWal.bind(store);
  let syncs = 0;
  internals.syncWal = () => {
    syncs += 1;
    return real();
  };
  expect(synchronousOf(store)).toBe(1);
  await store.insertIfAbsent('wf/r1/turn/1', 'model-turn', { text: 'hi' }, { durableWithNextCommit: true });
  expect(syncs).toBe(0);
  expect(synchronousOf(store)).toBe(1);
  const claim = await store.begin('wf/r1/1', 'fp', { owner: 'me' });
  expect(claim.state).toBe('started');
  expect(syncs).toBe(1);
  expect(synchronousOf(store)).toBe(1);
  await store.close();
});
