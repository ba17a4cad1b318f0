import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import type { TranscriptMessage } from '../../src/contract/model-types';
import {
  createTranscriptStore,
  transcriptStoreConfigFromEnv,
} from '../../src/stores/transcripts/create-transcript-store';
import { MemoryTranscriptStore } from '../../src/stores/transcripts/memory-transcript-store';
import { PostgresTranscriptStore } from '../../src/stores/transcripts/postgres-transcript-store';
import { SqliteTranscriptStore } from '../../src/stores/transcripts/sqlite-transcript-store';
import type { TranscriptStore } from '../../src/stores/transcripts/transcript-store';
import { TranscriptStoreError } from '../../src/stores/transcripts/transcript-store-error';

const POSTGRES_URL = process.env.DURABLE_TOOLS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const TABLE = `transcripts_contract_${process.pid}_${Date.now().toString(36)}`;
const tempDir = mkdtempSync(join(tmpdir(), 'transcripts-contract-'));
let runs = 0;

afterAll(async () => {
  const admin = new Pool({ connectionString: POSTGRES_URL, max: 1 });
  await admin.query(`DROP TABLE IF EXISTS "${TABLE}"`);
  await admin.query(`DROP TABLE IF EXISTS "${TABLE}_payloads"`);
  await admin.end();
  rmSync(tempDir, { recursive: true, force: true });
});

/** A fresh run key, so tests sharing a store never see each other's runs. */
function runKey(): string {
  return `run-${++runs}`;
}

function user(content: string): TranscriptMessage {
  return { role: 'user', content };
}

/** Messages of every kind the engine writes, with nesting, unicode and characters JSON and SQL escape. */
const RICH: TranscriptMessage[] = [
  user('Book Zürich → 東京 for 2 🧳 "quoted" \\ back\nslash \u0000 nul and a lone \ud800 surrogate'),
  {
    role: 'assistant',
    text: 'Searching…',
    toolCalls: [{ id: 'call_1', name: 'searchFlights', arguments: '{"from":"ZRH","to":"NRT","nights":3}' }],
  },
  {
    role: 'tool',
    toolCallId: 'call_1',
    name: 'searchFlights',
    stepId: 7,
    observation: {
      status: 'ok',
      output: {
        zeta: 1,
        alpha: [{ flight: 'LX 160', price: { amount: 1234.5, currency: 'CHF' }, tags: [], stops: null }],
        nested: { deep: { deeper: { emoji: '✈️', empty: {}, bool: false, exp: 1e21, neg: -0.000001 } } },
      },
      replayed: true,
    },
  },
  {
    role: 'tool',
    toolCallId: 'call_2',
    name: 'bookFlight',
    stepId: 8,
    observation: {
      status: 'error',
      code: 'INVALID_ARGUMENTS',
      message: 'nights must be a number',
      hint: 'pass `nights` as a number',
      retryable: false,
      attempts: 0,
      issues: [{ path: 'nights', message: 'Expected number, received string' }],
    },
  },
  { role: 'assistant', toolCalls: [] },
];

interface Backend {
  name: string;
  create(): TranscriptStore;
}

const backends: Backend[] = [
  { name: 'memory', create: () => new MemoryTranscriptStore() },
  { name: 'SQLite', create: () => new SqliteTranscriptStore({ path: join(tempDir, 'contract.sqlite') }) },
  {
    name: 'Postgres',
    create: () => new PostgresTranscriptStore({ connectionString: POSTGRES_URL, table: TABLE, poolSize: 8 }),
  },
];

/**
 * The stores of one backend's tests, opened before them and closed after them: `store`, and `other`, a second
 * store on the same backend (another worker process) where the backend is shared (the same one for memory).
 */
function useStorePair(name: string, create: () => TranscriptStore): { store: TranscriptStore; other: TranscriptStore } {
  const stores = {} as { store: TranscriptStore; other: TranscriptStore };
  beforeAll(() => {
    stores.store = create();
    stores.other = name === 'memory' ? stores.store : create();
  });
  afterAll(async () => {
    await stores.store.close();
    if (stores.other !== stores.store) await stores.other.close();
  });
  return stores;
}

describe.each(backends)('the $name transcript store', ({ name, create }) => {
  const stores = useStorePair(name, create);

  it('writes from 0, then appends', async () => {
    const run = runKey();

    expect(await stores.store.write(run, 0, [user('a'), user('b')])).toBe(true);
    expect(await stores.store.write(run, 2, [user('c')])).toBe(true);

    expect(await stores.store.read(run)).toEqual([user('a'), user('b'), user('c')]);
  });

  it('replaces a retried write at the same position without duplicates, dropping what came after', async () => {
    const run = runKey();
    await stores.store.write(run, 0, [user('a'), user('b'), user('c'), user('d')]);

    expect(await stores.store.write(run, 1, [user('B')])).toBe(true);
    expect(await stores.store.write(run, 1, [user('B')])).toBe(true);

    expect(await stores.store.read(run)).toEqual([user('a'), user('B')]);
  });

  it('refuses a write beyond the stored length and writes nothing', async () => {
    const run = runKey();
    await stores.store.write(run, 0, [user('a')]);

    expect(await stores.store.write(run, 2, [user('c')])).toBe(false);
    expect(await stores.store.write(runKey(), 1, [user('x')])).toBe(false);

    expect(await stores.store.read(run)).toEqual([user('a')]);
  });

  it('reads an unknown run as undefined', async () => {
    expect(await stores.store.read('never-written')).toBeUndefined();
  });

  it('keeps runs independent', async () => {
    const [first, second] = [runKey(), runKey()];
    await stores.store.write(first, 0, [user('1a'), user('1b')]);
    await stores.store.write(second, 0, [user('2a')]);

    await stores.store.write(second, 0, [user('2A')]);
    await stores.store.delete(second);

    expect(await stores.store.read(first)).toEqual([user('1a'), user('1b')]);
    expect(await stores.store.write(second, 1, [user('2b')])).toBe(false);
  });

  it('deletes a run, after which it can be written from 0 again', async () => {
    const run = runKey();
    await stores.store.write(run, 0, [user('a'), user('b')]);

    await stores.store.delete(run);

    expect(await stores.store.read(run)).toBeUndefined();
    expect(await stores.store.write(run, 0, [user('again')])).toBe(true);
    expect(await stores.store.read(run)).toEqual([user('again')]);
  });

  it('round-trips every kind of message exactly, key order included', async () => {
    const run = runKey();

    expect(await stores.store.write(run, 0, RICH.slice(0, 2))).toBe(true);
    expect(await stores.store.write(run, 2, RICH.slice(2))).toBe(true);
    const read = await stores.other.read(run);

    expect(read).toEqual(RICH);
    expect(JSON.stringify(read)).toBe(JSON.stringify(RICH));
  });

  it('leaves one whole write when concurrent writers of a run write at the same position', async () => {
    const run = runKey();
    const prefix = [user('p0'), user('p1')];
    await stores.store.write(run, 0, prefix);
    const writers = 24;
    const messagesOf = (w: number): TranscriptMessage[] =>
      Array.from({ length: 1 + (w % 5) }, (_, i) => user(`w${w}-${i}`));

    for (let round = 0; round < 3; round++) {
      const results = await Promise.all(
        Array.from({ length: writers }, (_, w) =>
          (w % 2 === 0 ? stores.store : stores.other).write(run, 2, messagesOf(w)),
        ),
      );
      expect(results).toEqual(Array.from({ length: writers }, () => true));

      const read = (await stores.store.read(run)) ?? [];
      const winner = Number(/^w(\d+)-0$/.exec((read[2] as { content: string }).content)?.[1]);
      expect(read).toEqual([...prefix, ...messagesOf(winner)]);
    }
    // No gaps: the store counts exactly what it returns, so an append right after the end is accepted.
    const length = (await stores.store.read(run))?.length ?? 0;
    expect(await stores.other.write(run, length, [user('tail')])).toBe(true);
    expect(await stores.store.read(run)).toHaveLength(length + 1);
  });
});

describe.each(backends)('stored payloads (claim checks) in the $name transcript store', ({ name, create }) => {
  const stores = useStorePair(name, create);

  it('stores a payload of several megabytes and reads it back exactly, from another instance of the store', async () => {
    const text = JSON.stringify({ blob: 'x'.repeat(3 * 1024 * 1024), unicode: 'Zürich 東京 🧳 \ud800 "q"' });

    await stores.store.putPayload(`out:${name}/big`, { runId: 'run-a', text });

    expect(await stores.other.getPayload(`out:${name}/big`)).toMatchObject({ runId: 'run-a', text });
  });

  it('replaces a payload stored again under the same handle (a retried call)', async () => {
    await stores.store.putPayload(`out:${name}/again`, { runId: 'run-a', text: '"first"' });
    await stores.store.putPayload(`out:${name}/again`, { runId: 'run-a', text: '"second"' });

    expect(await stores.store.getPayload(`out:${name}/again`)).toMatchObject({ runId: 'run-a', text: '"second"' });
  });

  it('reads an unknown handle as undefined', async () => {
    expect(await stores.store.getPayload(`out:${name}/never`)).toBeUndefined();
  });
});

describe('the Postgres transcript store table', () => {
  it('holds the messages of a run at positions 0..n-1 after concurrent writers', async () => {
    const stores = [0, 1].map(() => new PostgresTranscriptStore({ connectionString: POSTGRES_URL, table: TABLE }));
    const admin = new Pool({ connectionString: POSTGRES_URL, max: 1 });
    const run = runKey();
    await (stores[0] as PostgresTranscriptStore).write(run, 0, [user('a')]);

    await Promise.all(
      Array.from({ length: 16 }, (_, w) =>
        (stores[w % 2] as PostgresTranscriptStore).write(
          run,
          1,
          Array.from({ length: 1 + (w % 4) }, (_, i) => user(`w${w}-${i}`)),
        ),
      ),
    );
    const { rows } = await admin.query<{ seq: number }>(`SELECT seq FROM "${TABLE}" WHERE run_key = $1 ORDER BY seq`, [
      run,
    ]);

    expect(rows.map((row) => row.seq)).toEqual(rows.map((_, i) => i));
    await Promise.all(stores.map((store) => store.close()));
    await admin.end();
  });

  it('rejects a table name that is not a plain identifier', () => {
    expect(() => new PostgresTranscriptStore({ table: 'x; DROP TABLE y' })).toThrow(
      expect.objectContaining({ name: 'TranscriptStoreError', code: 'INVALID_CONFIG' }),
    );
  });

  it('reports an unreachable server as STORE_UNAVAILABLE and a closed store as STORE_CLOSED', async () => {
    const store = new PostgresTranscriptStore({ connectionString: 'postgres://postgres@127.0.0.1:1/test' });

    await expect(store.read('r')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await store.close();
    await expect(store.write('r', 0, [user('a')])).rejects.toMatchObject({ code: 'STORE_CLOSED' });
  });
});

describe('transcriptStoreConfigFromEnv and createTranscriptStore', () => {
  it('chooses SQLite in the project data directory when nothing is set', () => {
    expect(transcriptStoreConfigFromEnv({})).toEqual({ kind: 'sqlite', path: '.data/transcripts.sqlite' });
  });

  it('takes the SQLite path from DURABLE_TOOLS_TRANSCRIPT_SQLITE_PATH', () => {
    const env = { DURABLE_TOOLS_TRANSCRIPT_STORE: 'sqlite', DURABLE_TOOLS_TRANSCRIPT_SQLITE_PATH: '/var/t.sqlite' };

    expect(transcriptStoreConfigFromEnv(env)).toEqual({ kind: 'sqlite', path: '/var/t.sqlite' });
  });

  it('chooses Postgres with DURABLE_TOOLS_POSTGRES_URL, else the default local URL', () => {
    expect(transcriptStoreConfigFromEnv({ DURABLE_TOOLS_TRANSCRIPT_STORE: ' Postgres ' })).toEqual({
      kind: 'postgres',
      connectionString: 'postgres://postgres@127.0.0.1:5432/test',
    });
    const env = { DURABLE_TOOLS_TRANSCRIPT_STORE: 'postgres', DURABLE_TOOLS_POSTGRES_URL: 'postgres://db/agents' };
    expect(transcriptStoreConfigFromEnv(env)).toEqual({ kind: 'postgres', connectionString: 'postgres://db/agents' });
  });

  it('chooses memory', () => {
    expect(transcriptStoreConfigFromEnv({ DURABLE_TOOLS_TRANSCRIPT_STORE: 'memory' })).toEqual({ kind: 'memory' });
  });

  it('rejects an unknown kind with INVALID_CONFIG', () => {
    let error: unknown;
    try {
      transcriptStoreConfigFromEnv({ DURABLE_TOOLS_TRANSCRIPT_STORE: 'redis' });
    } catch (caught) {
      error = caught;
    }

    expect(error).toBeInstanceOf(TranscriptStoreError);
    expect(error).toMatchObject({ name: 'TranscriptStoreError', code: 'INVALID_CONFIG' });
    expect((error as Error).message).toMatch('redis');
    expect(() => createTranscriptStore({ kind: 'redis' } as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG' }),
    );
  });

  it('creates the store each kind names', async () => {
    const stores = [
      createTranscriptStore({ kind: 'memory' }),
      createTranscriptStore({ kind: 'sqlite', path: join(tempDir, 'nested', 'created.sqlite') }),
      createTranscriptStore({ kind: 'postgres', connectionString: POSTGRES_URL, table: TABLE }),
    ];

    expect(stores.map((store) => store.constructor)).toEqual([
      MemoryTranscriptStore,
      SqliteTranscriptStore,
      PostgresTranscriptStore,
    ]);
    for (const store of stores) {
      expect(await store.write('created', 0, [user('x')])).toBe(true);
      await store.close();
    }
  });
});
