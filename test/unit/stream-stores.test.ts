/**
 * The stream stores behind one contract: gapless increasing offsets per stream (also with two writers), reads
 * from an offset, a waiting reader woken by an append made through another instance (another process, for the
 * SQLite file and Postgres), and bounded retention by size and age.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { MemoryStreamStore } from '../../src/stores/streams/memory-stream-store';
import { SqliteStreamStore } from '../../src/stores/streams/sqlite-stream-store';
import { PostgresStreamStore } from '../../src/stores/streams/postgres-stream-store';
import type { StreamStore } from '../../src/stores/streams/stream-store';
import type { AgentStreamEventData } from '../../src/stores/streams/stream-events';
import type { StreamRetentionOptions } from '../../src/stores/streams/stream-retention';
import { StreamStoreError } from '../../src/stores/streams/stream-store-error';

const POSTGRES_URL = process.env.DURABLE_TOOLS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const dir = mkdtempSync(join(tmpdir(), 'dt-streams-'));
const tables: string[] = [];
let counter = 0;

/** Two instances over the same storage (for memory: the same instance, one process). */
type Pair = (retention?: StreamRetentionOptions) => [StreamStore, StreamStore];

const KINDS: Record<string, Pair> = {
  memory: (retention) => {
    const store = new MemoryStreamStore(retention);
    return [store, store];
  },
  sqlite: (retention) => {
    const path = join(dir, `s${(counter += 1)}.sqlite`);
    return [new SqliteStreamStore({ path, ...retention }), new SqliteStreamStore({ path, ...retention })];
  },
  postgres: (retention) => {
    const table = `stream_test_${process.pid}_${(counter += 1)}`;
    tables.push(table);
    const options = { connectionString: POSTGRES_URL, table, ...retention };
    return [new PostgresStreamStore(options), new PostgresStreamStore(options)];
  },
};

const open: StreamStore[] = [];
afterAll(async () => {
  await Promise.all([...new Set(open)].map((store) => store.close()));
  const admin = new Pool({ connectionString: POSTGRES_URL, max: 1 });
  for (const table of tables) await admin.query(`DROP TABLE IF EXISTS "${table}_events", "${table}_heads"`);
  await admin.end();
  rmSync(dir, { recursive: true, force: true });
});

const segment = { workflowId: 'wf', runId: 'r1', turn: 0, attempt: 1 };
const delta = (text: string): AgentStreamEventData => ({ type: 'text-delta', segment, delta: text });

describe.each(Object.keys(KINDS))('the %s stream store', (kind) => {
  const pair = (retention?: StreamRetentionOptions) => {
    const stores = KINDS[kind]!(retention);
    open.push(...stores);
    return stores;
  };

  test('gives the events of a stream the offsets 1, 2, 3, … in append order', async () => {
    const [store] = pair();
    expect(await store.append('run/a', [delta('a'), delta('b')])).toBe(2);
    expect(await store.append('run/a', [delta('c')])).toBe(3);
    expect(await store.append('run/b', [delta('x')])).toBe(1);
    const events = await store.read('run/a', 1);
    expect(events.map((e) => [e.offset, e.type === 'text-delta' && e.delta])).toEqual([
      [1, 'a'],
      [2, 'b'],
      [3, 'c'],
    ]);
    expect(await store.head('run/a')).toBe(3);
  });

  test('reads from an offset, at most a limit', async () => {
    const [store] = pair();
    await store.append('run/a', ['a', 'b', 'c', 'd'].map(delta));
    expect((await store.read('run/a', 2, 2)).map((e) => e.offset)).toEqual([2, 3]);
    expect(await store.read('run/a', 5)).toEqual([]);
  });

  test('keeps offsets gapless and unique when two writers append at once', async () => {
    const [one, two] = pair();
    await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 ? one : two).append('run/a', [delta(`${i}`), delta(`${i}`)])),
    );
    const offsets = (await one.read('run/a', 1)).map((e) => e.offset);
    expect(offsets).toEqual(Array.from({ length: 80 }, (_, i) => i + 1));
  });

  test('wakes a reader waiting on one instance when another appends', async () => {
    const [writer, reader] = pair();
    await writer.append('run/a', [delta('a')]);
    const woken = reader.waitFor('run/a', 2, { timeoutMs: 600_000 });
    await writer.append('run/a', [delta('b')]);
    await woken;
    expect((await reader.read('run/a', 2)).map((e) => e.offset)).toEqual([2]);
  });

  test('returns at once from a wait for an offset it already holds', async () => {
    const [store] = pair();
    await store.append('run/a', [delta('a')]);
    await store.waitFor('run/a', 1, { timeoutMs: 600_000 });
  });

  test('keeps only the newest maxEventsPerRun events of a stream, offsets unchanged', async () => {
    const [store] = pair({ maxEventsPerRun: 3 });
    await store.append('run/a', ['a', 'b', 'c', 'd', 'e'].map(delta));
    expect((await store.read('run/a', 1)).map((e) => e.offset)).toEqual([3, 4, 5]);
    expect(await store.append('run/a', [delta('f')])).toBe(6);
  });

  test('forgets events older than the retention and sweeps them', async () => {
    let now = 1_000_000;
    const [store] = pair({ retentionMs: 1000, clock: () => now });
    await store.append('run/a', [delta('old')]);
    now += 600;
    await store.append('run/a', [delta('new')]);
    now += 600;
    expect((await store.read('run/a', 1)).map((e) => e.offset)).toEqual([2]);
    expect(await store.sweep()).toBe(1);
    expect(await store.head('run/a')).toBe(2);
  });
});

test('a stream store refuses a bound that is not a positive number', () => {
  expect(() => new MemoryStreamStore({ maxEventsPerRun: 0 })).toThrow(StreamStoreError);
  expect(() => new MemoryStreamStore({ retentionMs: -1 })).toThrow(StreamStoreError);
});
