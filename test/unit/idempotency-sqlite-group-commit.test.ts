import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IdempotencyStoreError } from '../../src/stores/idempotency';
import { SqliteIdempotencyStore } from '../../src/stores/idempotency/sqlite-idempotency-store';

/**
 * Group commit in the SQLite store: the writes callers make in the same turn of the event loop (the claims and
 * completions of concurrent runs on one worker) share one transaction and one fsync; each caller's promise
 * resolves only once that commit is done, and a write that fails fails alone.
 */

const dir = mkdtempSync(join(tmpdir(), 'sqlite-group-commit-'));
let n = 0;
const pathOf = () => join(dir, `keys-${++n}.sqlite`);
const lease = { owner: 'worker-a', leaseMs: 10_000 };

/** The store's internals a test looks at: the group commit, and its private write. */
interface Internals {
  commitGroup: (writes: readonly unknown[]) => unknown[];
  write<T>(operation: () => T): Promise<T>;
}

/** Counts the groups the store commits, and their sizes. */
function countGroups(store: SqliteIdempotencyStore): number[] {
  const internals = store as unknown as Internals;
  const sizes: number[] = [];
  const commit = internals.commitGroup;
  internals.commitGroup = (writes) => {
    sizes.push(writes.length);
    return commit(writes);
  };
  return sizes;
}

test('claims made in one turn of the event loop are committed in one group, each durable when it resolves', async () => {
  const path = pathOf();
  const store = new SqliteIdempotencyStore({ path });
  const groups = countGroups(store);
  const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => store.begin(`run-${i}/1`, 'fp', lease)));
  expect(outcomes.every((outcome) => outcome.state === 'started')).toBe(true);
  expect(groups).toEqual([20]);
  const other = new Database(path, { readonly: true });
  expect(other.prepare('SELECT count(*) AS n FROM idempotency_keys').get()).toEqual({ n: 20 });
  other.close();
  await store.close();
});

test('two claims of one key in the same group: exactly one is started, the other finds it in flight', async () => {
  const store = new SqliteIdempotencyStore({ path: pathOf() });
  const [a, b] = await Promise.all([store.begin('k', 'fp', lease), store.begin('k', 'fp', { ...lease, owner: 'b' })]);
  expect([a.state, b.state].sort()).toEqual(['in_flight', 'started']);
  await store.close();
});

test('a write that fails in a group fails alone, as STORE_UNAVAILABLE; the others commit', async () => {
  const store = new SqliteIdempotencyStore({ path: pathOf() });
  const internals = store as unknown as Internals;
  const [first, failing, last] = await Promise.allSettled([
    store.begin('k1', 'fp', lease),
    internals.write(() => {
      throw new Error('disk on fire');
    }),
    store.begin('k2', 'fp', lease),
  ]);
  expect(first).toMatchObject({ status: 'fulfilled', value: { state: 'started' } });
  expect(last).toMatchObject({ status: 'fulfilled', value: { state: 'started' } });
  expect(failing.status).toBe('rejected');
  const reason = (failing as PromiseRejectedResult).reason as IdempotencyStoreError;
  expect(reason).toBeInstanceOf(IdempotencyStoreError);
  expect(reason.code).toBe('STORE_UNAVAILABLE');
  expect(reason.message).toContain('disk on fire');
  expect(await store.lookup('k1', 'fp')).toMatchObject({ state: 'in_flight' });
  await store.close();
});

test('writes asked for before close are committed before the store closes', async () => {
  const path = pathOf();
  const store = new SqliteIdempotencyStore({ path });
  const pending = store.insertIfAbsent('k', 'fp', { ok: true });
  await store.close();
  await expect(pending).resolves.toEqual({ state: 'inserted' });
  const reopened = new SqliteIdempotencyStore({ path });
  expect(await reopened.lookup('k', 'fp')).toMatchObject({ state: 'completed', result: { ok: true } });
  await reopened.close();
});

test('with groupCommit: false every write commits on its own', async () => {
  const store = new SqliteIdempotencyStore({ path: pathOf(), groupCommit: false });
  const groups = countGroups(store);
  await Promise.all([store.begin('a', 'fp', lease), store.begin('b', 'fp', lease)]);
  expect(groups).toEqual([]);
  expect(await store.lookup('b', 'fp')).toMatchObject({ state: 'in_flight' });
  await store.close();
});
