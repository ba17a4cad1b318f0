import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { createSeededRandom } from '../../src/failures/seeded-random';
import { Pool } from 'pg';
import {
  canonicalJson,
  fingerprint,
  MemoryIdempotencyStore,
  PostgresIdempotencyStore,
  SqliteIdempotencyStore,
  type IdempotencyStore,
} from '../../src/stores/idempotency';

const POSTGRES_URL = process.env.DURABLE_TOOLS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const TABLE = `idem_property_${process.pid}_${Date.now().toString(36)}`;
const tempDir = mkdtempSync(join(tmpdir(), 'idem-property-'));

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The same data with the keys of every object, at every depth, in a shuffled order. */
function shuffleKeysDeep(value: Json, next: () => number): Json {
  if (Array.isArray(value)) return value.map((item) => shuffleKeysDeep(item, next));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value);
  for (let i = entries.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [entries[i], entries[j]] = [entries[j] as [string, Json], entries[i] as [string, Json]];
  }
  // fromEntries defines own properties, so a "__proto__" key stays a key.
  return Object.fromEntries(entries.map(([key, item]) => [key, shuffleKeysDeep(item, next)]));
}

/** `value` with its n-th node (depth-first, modulo the node count) replaced by `replacement`. */
function replaceNode(value: Json, n: number, replacement: Json): Json {
  const count = (v: Json): number =>
    1 + (v !== null && typeof v === 'object' ? Object.values(v).reduce<number>((sum, c) => sum + count(c), 0) : 0);
  let target = n % count(value);
  const walk = (v: Json): Json => {
    if (target-- === 0) return replacement;
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, c]) => [k, walk(c)]));
    return v;
  };
  return walk(value);
}

const json = fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<Json>;

interface Backend {
  name: string;
  numRuns: number;
  store: () => IdempotencyStore;
}

let sqlite: SqliteIdempotencyStore | undefined;
let postgres: PostgresIdempotencyStore | undefined;
const memory = new MemoryIdempotencyStore();

const backends: Backend[] = [
  { name: 'memory', numRuns: 1_000, store: () => memory },
  {
    name: 'sqlite',
    numRuns: 300,
    store: () => (sqlite ??= new SqliteIdempotencyStore({ path: join(tempDir, 'p.sqlite') })),
  },
  {
    name: 'postgres',
    numRuns: 200,
    store: () =>
      (postgres ??= new PostgresIdempotencyStore({ connectionString: POSTGRES_URL, table: TABLE, poolSize: 2 })),
  },
];

afterAll(async () => {
  await Promise.all([memory.close(), sqlite?.close(), postgres?.close()]);
  const admin = new Pool({ connectionString: POSTGRES_URL, max: 1 });
  await admin.query(`DROP TABLE IF EXISTS "${TABLE}"`);
  await admin.end();
  rmSync(tempDir, { recursive: true, force: true });
});

let keyCounter = 0;

/** Begins `first`, optionally completes it, then begins `second` under the same key; returns the second state. */
async function secondBegin(store: IdempotencyStore, first: Json, second: Json, completeFirst: boolean) {
  const key = `property-${process.pid}-${++keyCounter}`;
  const outcome = await store.begin(key, fingerprint(first), { owner: 'first', leaseMs: 60_000 });
  if (outcome.state !== 'started') throw new Error(`expected started, got ${outcome.state}`);
  if (completeFirst) await store.complete(key, outcome.token, first);
  return store.begin(key, fingerprint(second), { owner: 'second', leaseMs: 60_000 });
}

describe.each(backends)('fingerprints in the $name idempotency store', ({ numRuns, store }) => {
  it('always reports a conflict when the key is reused with a payload of other canonical JSON', async () => {
    await fc.assert(
      fc.asyncProperty(json, json, fc.boolean(), async (a, b, completeFirst) => {
        fc.pre(canonicalJson(a) !== canonicalJson(b));
        const outcome = await secondBegin(store(), a, b, completeFirst);
        expect(outcome).toEqual({ state: 'conflict', storedFingerprint: fingerprint(a) });
      }),
      { numRuns },
    );
  });

  it('reports a conflict when a single node deep inside the payload changes', async () => {
    await fc.assert(
      fc.asyncProperty(json, fc.nat(), json, fc.boolean(), async (a, n, replacement, completeFirst) => {
        const b = replaceNode(a, n, replacement);
        fc.pre(canonicalJson(a) !== canonicalJson(b));
        const outcome = await secondBegin(store(), a, b, completeFirst);
        expect(outcome).toEqual({ state: 'conflict', storedFingerprint: fingerprint(a) });
      }),
      { numRuns },
    );
  });

  it('never reports a conflict for the same payload with its keys in another order at any depth', async () => {
    await fc.assert(
      fc.asyncProperty(json, fc.integer(), fc.boolean(), async (a, seed, completeFirst) => {
        const b = shuffleKeysDeep(a, createSeededRandom(seed));
        expect(canonicalJson(b)).toBe(canonicalJson(a));
        const outcome = await secondBegin(store(), a, b, completeFirst);
        expect(outcome.state).toBe(completeFirst ? 'completed' : 'in_flight');
        if (outcome.state === 'completed') expect(outcome.result).toEqual(JSON.parse(JSON.stringify(a)));
      }),
      { numRuns },
    );
  });
});
