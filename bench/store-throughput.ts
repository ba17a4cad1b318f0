/**
 * `npm run bench:stores`: begin+complete pairs per second of the SQLite and Postgres idempotency stores,
 * sequentially and with `concurrency` callers at once, next to a raw SQL floor measured in the same run
 * (each store and its floor in alternating slices of every round). The floor does the least a durable key
 * store must: one committed INSERT of the key's row (the claim) and one committed UPDATE of it (the result),
 * on a table of the same shape, with the same connection settings (SQLite: same file system, WAL and
 * `synchronous` mode; Postgres: a pool of the same size). Printed, never asserted; the last line gives each store's pairs/s as a fraction of its floor
 * (the lower of the sequential and the concurrent ratio, each the median of the rounds' ratios). The slices
 * matter on a shared machine: the disk's fsync time swings by 2x within seconds, and a whole measurement of
 * one subject at a time caught such a swing on one side only.
 *
 * Like any store with this contract, the floor's claim is kept until its lease ends plus retention, and its
 * result for retention from the moment of completion (read from the clock again), so the UPDATE moves
 * `expires_at`. (An earlier floor wrote the same `expires_at` twice; on Postgres that let every floor
 * UPDATE be a HOT update, with no index entries written, which no store keeping a result for retention after
 * completion can do.)
 */
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import {
  PostgresIdempotencyStore,
  POSTGRES_STORE_DEFAULTS,
} from '../src/stores/idempotency/postgres-idempotency-store';
import { SqliteIdempotencyStore, SQLITE_STORE_DEFAULTS } from '../src/stores/idempotency/sqlite-idempotency-store';
import type { IdempotencyStore } from '../src/stores/idempotency/idempotency-store';
import { LoadSampler, machineLine, median, rotate } from './bench-report';

const BENCH = {
  rounds: Number(process.env.BENCH_ROUNDS ?? 15),
  /** Pairs per measurement. */
  pairs: { sqlite: 400, postgres: 300 },
  concurrency: 20,
} as const;

const POSTGRES_URL = process.env.DURABLE_TOOLS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RESULT = { ok: true, id: 'r_123', note: 'a small tool result' };
const LEASE_MS = 30_000;
/** Retention of the floor's rows (the stores' default). */
const RETENTION_MS = 86_400_000;

/** One begin+complete pair for a fresh key. */
type Pair = (key: string) => Promise<void>;

function storePair(store: IdempotencyStore): Pair {
  return async (key) => {
    const outcome = await store.begin(key, 'fp', { owner: 'bench', leaseMs: LEASE_MS });
    if (outcome.state !== 'started') throw new Error(`begin of a fresh key gave ${outcome.state}`);
    await store.complete(key, outcome.token, RESULT);
  };
}

const COLUMNS = `key TEXT PRIMARY KEY NOT NULL, fingerprint TEXT NOT NULL, state TEXT NOT NULL, token TEXT NOT NULL,
  owner TEXT NOT NULL, previous_owner TEXT, lease_expires_at BIGINT, result_json TEXT, error_json TEXT,
  takeovers INTEGER NOT NULL DEFAULT 0, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, expires_at BIGINT NOT NULL`;

function rawSqlite(path: string): { pair: Pair; close(): void } {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${SQLITE_STORE_DEFAULTS.synchronous}`);
  db.exec(
    `CREATE TABLE raw_keys (${COLUMNS}) WITHOUT ROWID; CREATE INDEX raw_keys_expires_at ON raw_keys (expires_at);`,
  );
  const insert = db.prepare(
    `INSERT INTO raw_keys (key, fingerprint, state, token, owner, lease_expires_at, created_at, updated_at, expires_at)
     VALUES (?, 'fp', 'in_progress', ?, 'bench', ?, ?, ?, ?)`,
  );
  const update = db.prepare(
    `UPDATE raw_keys SET state = 'completed', result_json = ?, lease_expires_at = NULL, updated_at = ?, expires_at = ?
     WHERE key = ? AND token = ? AND state = 'in_progress'`,
  );
  return {
    pair: async (key) => {
      const token = randomUUID();
      const now = Date.now();
      insert.run(key, token, now + LEASE_MS, now, now, now + LEASE_MS + RETENTION_MS);
      await Promise.resolve(); // the effect happens between the two writes
      const done = Date.now();
      update.run(JSON.stringify(RESULT), done, done + RETENTION_MS, key, token);
    },
    close: () => db.close(),
  };
}

function rawPostgres(pool: Pool, table: string): Pair {
  return async (key) => {
    const token = randomUUID();
    const now = Date.now();
    await pool.query({
      name: `${table}_insert`,
      text: `INSERT INTO "${table}" (key, fingerprint, state, token, owner, lease_expires_at, created_at, updated_at, expires_at)
             VALUES ($1, 'fp', 'in_progress', $2, 'bench', $3, $4, $4, $5)`,
      values: [key, token, now + LEASE_MS, now, now + LEASE_MS + RETENTION_MS],
    });
    const done = Date.now();
    await pool.query({
      name: `${table}_update`,
      text: `UPDATE "${table}" SET state = 'completed', result_json = $1::json, lease_expires_at = NULL, updated_at = $2,
             expires_at = $3 WHERE key = $4 AND token = $5 AND state = 'in_progress'`,
      values: [JSON.stringify(RESULT), done, done + RETENTION_MS, key, token],
    });
  };
}

/** Runs `count` pairs with `callers` callers at once; returns the time taken in ms. */
async function timed(pair: Pair, count: number, callers: number): Promise<number> {
  const prefix = randomUUID();
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (next < count) await pair(`${prefix}/${next++}`);
    }),
  );
  return performance.now() - t0;
}

/** Slices per subject of one measurement. */
const SLICES = 4;

/**
 * Pairs/s of a store and of its floor over `count` pairs each, measured in alternating slices (A B B A A B B A,
 * flipped every other round), so that a slow spell of the shared disk or CPU falls on both rather than on
 * whichever happened to run then.
 */
async function measurePair(
  store: Pair,
  raw: Pair,
  count: number,
  callers: number,
  flip: boolean,
): Promise<{ store: number; raw: number }> {
  const slice = Math.ceil(count / SLICES);
  const ms = { store: 0, raw: 0 };
  for (let i = 0; i < SLICES * 2; i++) {
    const storeTurn = (i % 4 === 0 || i % 4 === 3) !== flip;
    if (storeTurn) ms.store += await timed(store, slice, callers);
    else ms.raw += await timed(raw, slice, callers);
  }
  return { store: ((slice * SLICES) / ms.store) * 1000, raw: ((slice * SLICES) / ms.raw) * 1000 };
}

type Subject = 'sqlite store' | 'sqlite raw' | 'postgres store' | 'postgres raw';
const SUBJECTS: readonly Subject[] = ['sqlite store', 'sqlite raw', 'postgres store', 'postgres raw'];
type Backend = 'sqlite' | 'postgres';
type Mode = 'sequential' | 'concurrent';
const MODES: readonly Mode[] = ['sequential', 'concurrent'];

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'durable-tools-bench-stores-'));
  const suffix = `${process.pid}_${Date.now().toString(36)}`;
  const storeTable = `bench_store_${suffix}`;
  const rawTable = `bench_raw_${suffix}`;
  const sqliteStore = new SqliteIdempotencyStore({ path: join(dir, 'store.sqlite') });
  const sqliteRaw = rawSqlite(join(dir, 'raw.sqlite'));
  const pgStore = new PostgresIdempotencyStore({ connectionString: POSTGRES_URL, table: storeTable });
  const pool = new Pool({ connectionString: POSTGRES_URL, max: POSTGRES_STORE_DEFAULTS.poolSize });
  await pool.query(
    `CREATE TABLE "${rawTable}" (${COLUMNS.replace(/result_json TEXT, error_json TEXT/, 'result_json JSON, error_json JSON')})`,
  );
  await pool.query(`CREATE INDEX "${rawTable}_expires_at" ON "${rawTable}" (expires_at)`);
  const pairs: Record<Subject, Pair> = {
    'sqlite store': storePair(sqliteStore),
    'sqlite raw': sqliteRaw.pair,
    'postgres store': storePair(pgStore),
    'postgres raw': rawPostgres(pool, rawTable),
  };
  const results = Object.fromEntries(
    SUBJECTS.map((s) => [s, { sequential: [] as number[], concurrent: [] as number[] }]),
  ) as Record<Subject, Record<Mode, number[]>>;
  const ratios: Record<Backend, Record<Mode, number[]>> = {
    sqlite: { sequential: [], concurrent: [] },
    postgres: { sequential: [], concurrent: [] },
  };
  const load = new LoadSampler();
  try {
    for (const subject of SUBJECTS) await timed(pairs[subject], 50, 5); // warm-up (and table creation)
    for (let round = 0; round < BENCH.rounds; round++) {
      for (const backend of rotate(['sqlite', 'postgres'] as const, round)) {
        for (const mode of MODES) {
          const callers = mode === 'sequential' ? 1 : BENCH.concurrency;
          const [store, raw] = [pairs[`${backend} store`], pairs[`${backend} raw`]];
          const rate = await measurePair(store, raw, BENCH.pairs[backend], callers, round % 2 === 1);
          results[`${backend} store`][mode].push(rate.store);
          results[`${backend} raw`][mode].push(rate.raw);
          ratios[backend][mode].push(rate.store / rate.raw);
        }
      }
      const last = (b: Backend) => MODES.map((k) => `x${ratios[b][k][round]!.toFixed(2)}`).join('/');
      process.stderr.write(
        `round ${round + 1}/${BENCH.rounds} done (load ${load.sample().toFixed(1)}; store/raw sequential/concurrent: sqlite ${last('sqlite')}, postgres ${last('postgres')})\n`,
      );
    }
  } finally {
    await sqliteStore.close();
    sqliteRaw.close();
    await pgStore.close();
    await pool.query(`DROP TABLE IF EXISTS "${rawTable}"`).catch(() => undefined);
    await pool.query(`DROP TABLE IF EXISTS "${storeTable}"`).catch(() => undefined);
    await pool.end();
    rmSync(dir, { recursive: true, force: true });
  }

  const m = (s: Subject, k: Mode) => median(results[s][k]);
  console.log(
    `begin+complete pairs/s, medians of ${BENCH.rounds} rounds, store and floor in alternating slices (SQLite synchronous=${SQLITE_STORE_DEFAULTS.synchronous}, WAL; Postgres pool of ${POSTGRES_STORE_DEFAULTS.poolSize})`,
  );
  console.log(`${''.padEnd(16)}${'sequential'.padStart(12)}${`${BENCH.concurrency} callers`.padStart(12)}`);
  for (const s of SUBJECTS) {
    console.log(
      `${s.padEnd(16)}${m(s, 'sequential').toFixed(0).padStart(12)}${m(s, 'concurrent').toFixed(0).padStart(12)}`,
    );
  }
  // The ratio of each round's interleaved measurement, then the median over rounds.
  const sqlite = MODES.map((k) => median(ratios.sqlite[k]));
  const postgres = MODES.map((k) => median(ratios.postgres[k]));
  console.log(
    `store/raw (median of the rounds' ratios): sqlite x${sqlite[0]!.toFixed(2)} sequential, x${sqlite[1]!.toFixed(2)} concurrent; postgres x${postgres[0]!.toFixed(2)} sequential, x${postgres[1]!.toFixed(2)} concurrent`,
  );
  console.log(`machine: ${machineLine()}; load average during the rounds ${load.range()}`);
  console.log(
    `stores: sqlite x${Math.min(...sqlite).toFixed(2)} of raw, postgres x${Math.min(...postgres).toFixed(2)} of raw`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
