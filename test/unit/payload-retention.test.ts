import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import {
  createTranscriptStore,
  transcriptStoreConfigFromEnv,
} from '../../src/stores/transcripts/create-transcript-store';
import { MemoryTranscriptStore } from '../../src/stores/transcripts/memory-transcript-store';
import { createPayloadReaper, type PayloadReaper } from '../../src/stores/transcripts/payload-reaper';
import { PAYLOAD_RETENTION, type PayloadRetentionOptions } from '../../src/stores/transcripts/payload-retention';
import { PostgresTranscriptStore } from '../../src/stores/transcripts/postgres-transcript-store';
import { SqliteTranscriptStore } from '../../src/stores/transcripts/sqlite-transcript-store';
import type { TranscriptStore } from '../../src/stores/transcripts/transcript-store';

const POSTGRES_URL = process.env.DURABLE_TOOLS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const TABLE = `payload_retention_${process.pid}_${Date.now().toString(36)}`;
const OLD_TABLE = `${TABLE}_old`;
const tempDir = mkdtempSync(join(tmpdir(), 'payload-retention-'));
const HOUR = 60 * 60 * 1000;

afterAll(async () => {
  const admin = new Pool({ connectionString: POSTGRES_URL, max: 1 });
  for (const table of [TABLE, `${TABLE}_payloads`, OLD_TABLE, `${OLD_TABLE}_payloads`]) {
    await admin.query(`DROP TABLE IF EXISTS "${table}"`);
  }
  await admin.end();
  rmSync(tempDir, { recursive: true, force: true });
});

const backends: Array<{ name: string; create(options: PayloadRetentionOptions): TranscriptStore }> = [
  { name: 'memory', create: (options) => new MemoryTranscriptStore(options) },
  {
    name: 'SQLite',
    create: (options) => new SqliteTranscriptStore({ path: join(tempDir, 'retention.sqlite'), ...options }),
  },
  {
    name: 'Postgres',
    create: (options) => new PostgresTranscriptStore({ connectionString: POSTGRES_URL, table: TABLE, ...options }),
  },
];

describe.each(backends)('stored payloads in the $name transcript store expire', ({ name, create }) => {
  // An injected clock, far in the past of the real one, so that these payloads never meet other tests'.
  let now = 1_000_000;
  let store: TranscriptStore;
  let handles = 0;
  const handle = () => `out:${name}/retention-${++handles}`;

  beforeEach(async () => {
    store = create({ clock: () => now, payloadRetentionMs: HOUR });
    // The file and the table are this test file's own: start every test from an empty payload table.
    await store.reapPayloads(Number.MAX_SAFE_INTEGER);
  });

  afterEach(async () => {
    await store.close();
  });

  test('a payload is kept for the retention after it was stored, then reads as absent', async () => {
    const h = handle();
    await store.putPayload(h, { runId: 'run-a', text: '"kept"' });
    now += HOUR - 1;
    expect(await store.getPayload(h)).toEqual({ runId: 'run-a', text: '"kept"', expiresAt: now + 1 });
    now += 1;
    expect(await store.getPayload(h)).toBeUndefined();
  });

  test('the reaper deletes expired payloads only, and says how many', async () => {
    const [old1, old2, fresh] = [handle(), handle(), handle()];
    await store.putPayload(old1, { runId: 'run-a', text: '1' });
    await store.putPayload(old2, { runId: 'run-a', text: '2' });
    now += HOUR / 2;
    await store.putPayload(fresh, { runId: 'run-a', text: '3' });
    now += HOUR / 2;

    expect(await store.reapPayloads()).toBe(2);
    expect(await store.reapPayloads()).toBe(0);
    expect(await store.getPayload(fresh)).toMatchObject({ text: '3' });
  });

  test('a payload with its own expiresAt is kept until then, whatever the retention', async () => {
    const [long, short] = [handle(), handle()];
    await store.putPayload(long, { runId: 'run-a', text: '"long"', expiresAt: now + 3 * HOUR });
    await store.putPayload(short, { runId: 'run-a', text: '"short"', expiresAt: now + 1 });
    now += 2 * HOUR;

    expect(await store.reapPayloads()).toBe(1);
    expect(await store.getPayload(long)).toMatchObject({ text: '"long"', expiresAt: now + HOUR });
    expect(await store.reapPayloads(now + HOUR)).toBe(1);
    expect(await store.getPayload(long)).toBeUndefined();
  });

  test('storing a handle again with a later expiresAt extends it', async () => {
    const h = handle();
    await store.putPayload(h, { runId: 'run-a', text: '"v"', expiresAt: now + 10 });
    await store.putPayload(h, { runId: 'run-a', text: '"v"', expiresAt: now + HOUR * 5 });
    now += HOUR * 4;

    expect(await store.reapPayloads()).toBe(0);
    expect(await store.getPayload(h)).toMatchObject({ text: '"v"' });
  });

  test('an expiresAt that is not a finite number is refused', async () => {
    await expect(store.putPayload(handle(), { runId: 'run-a', text: '1', expiresAt: Number.NaN })).rejects.toThrow(
      expect.objectContaining({ name: 'TranscriptStoreError', code: 'INVALID_CONFIG' }),
    );
  });
});

describe('payload retention settings', () => {
  test.each([0, -1, Number.POSITIVE_INFINITY, Number.NaN])('a retention of %p ms is refused', (ms) => {
    expect(() => new MemoryTranscriptStore({ payloadRetentionMs: ms })).toThrow(
      expect.objectContaining({ name: 'TranscriptStoreError', code: 'INVALID_CONFIG' }),
    );
    expect(() => new MemoryTranscriptStore({ payloadRetentionMs: ms })).toThrow('payloadRetentionMs must be');
  });

  test('the default retention is 7 days', async () => {
    let now = 0;
    const store = new MemoryTranscriptStore({ clock: () => now });
    await store.putPayload('h', { runId: 'r', text: '1' });
    expect(PAYLOAD_RETENTION.retentionMs).toBe(7 * 24 * HOUR);
    expect(await store.getPayload('h')).toMatchObject({ expiresAt: 7 * 24 * HOUR });
    now = 7 * 24 * HOUR;
    expect(await store.reapPayloads()).toBe(1);
  });

  test('DURABLE_TOOLS_PAYLOAD_RETENTION_MS sets the retention of the store the environment names', async () => {
    const env = { DURABLE_TOOLS_TRANSCRIPT_STORE: 'memory', DURABLE_TOOLS_PAYLOAD_RETENTION_MS: '60000' };
    expect(transcriptStoreConfigFromEnv(env)).toEqual({ kind: 'memory', payloadRetentionMs: 60_000 });
    const store = createTranscriptStore({ ...transcriptStoreConfigFromEnv(env), clock: () => 0 });
    await store.putPayload('h', { runId: 'r', text: '1' });
    expect(await store.getPayload('h')).toMatchObject({ expiresAt: 60_000 });
  });

  test('a DURABLE_TOOLS_PAYLOAD_RETENTION_MS that is not a positive number is refused, naming the variable', () => {
    expect(() => transcriptStoreConfigFromEnv({ DURABLE_TOOLS_PAYLOAD_RETENTION_MS: '7d' })).toThrow(
      'DURABLE_TOOLS_PAYLOAD_RETENTION_MS must be a positive number of milliseconds, not "7d".',
    );
  });
});

describe('stores created before payloads expired', () => {
  test('a SQLite table without the expiry column gets it, and its payloads the retention from now', async () => {
    const path = join(tempDir, 'old.sqlite');
    const db = new Database(path);
    db.exec('CREATE TABLE stored_payloads (handle TEXT PRIMARY KEY, run_id TEXT NOT NULL, text TEXT NOT NULL)');
    db.prepare('INSERT INTO stored_payloads VALUES (?, ?, ?)').run('h', 'r', '"old"');
    db.close();
    let now = 5_000;
    const store = new SqliteTranscriptStore({ path, clock: () => now, payloadRetentionMs: HOUR });

    expect(await store.getPayload('h')).toEqual({ runId: 'r', text: '"old"', expiresAt: 5_000 + HOUR });
    now += HOUR;
    expect(await store.reapPayloads()).toBe(1);
    await store.close();
  });

  test('a Postgres table without the expiry column gets it, and its payloads the retention from now', async () => {
    const admin = new Pool({ connectionString: POSTGRES_URL, max: 1 });
    await admin.query(
      `CREATE TABLE "${OLD_TABLE}_payloads" (handle TEXT PRIMARY KEY, run_id TEXT NOT NULL, text TEXT NOT NULL)`,
    );
    await admin.query(`INSERT INTO "${OLD_TABLE}_payloads" VALUES ('h', 'r', '"old"')`);
    await admin.end();
    let now = 5_000;
    const store = new PostgresTranscriptStore({
      connectionString: POSTGRES_URL,
      table: OLD_TABLE,
      clock: () => now,
      payloadRetentionMs: HOUR,
    });

    expect(await store.getPayload('h')).toEqual({ runId: 'r', text: '"old"', expiresAt: 5_000 + HOUR });
    now += HOUR;
    expect(await store.reapPayloads()).toBe(1);
    await store.close();
  });
});

describe('createPayloadReaper', () => {
  let reaper: PayloadReaper | undefined;
  afterEach(() => {
    reaper?.stop();
    reaper = undefined;
    jest.useRealTimers();
  });

  test('reaps a real store once per interval, reporting the count', async () => {
    jest.useFakeTimers();
    let now = 0;
    const store = new MemoryTranscriptStore({ clock: () => now, payloadRetentionMs: 1_000 });
    await store.putPayload('a', { runId: 'r', text: '1' });
    await store.putPayload('b', { runId: 'r', text: '2', expiresAt: 5_000 });
    const counts: number[] = [];
    reaper = createPayloadReaper(store, { intervalMs: 60_000, onReaped: (count) => counts.push(count) });

    now = 1_000;
    await jest.advanceTimersByTimeAsync(60_000);
    now = 5_000;
    await jest.advanceTimersByTimeAsync(60_000);
    await jest.advanceTimersByTimeAsync(60_000);

    expect(counts).toEqual([1, 1, 0]);
  });

  test('reports a failed reap and keeps reaping', async () => {
    jest.useFakeTimers();
    const errors: unknown[] = [];
    const reapPayloads = jest.fn(async () => {
      throw new Error('database down');
    });
    reaper = createPayloadReaper({ reapPayloads }, { intervalMs: 1_000, onError: (error) => errors.push(error) });

    await jest.advanceTimersByTimeAsync(2_000);

    expect(errors).toHaveLength(2);
    expect(reapPayloads).toHaveBeenCalledTimes(2);
  });

  test('refuses an interval that is not a positive number', () => {
    expect(() => createPayloadReaper(new MemoryTranscriptStore(), { intervalMs: 0 })).toThrow(
      expect.objectContaining({ name: 'TranscriptStoreError', code: 'INVALID_CONFIG' }),
    );
  });
});
