import { Pool } from 'pg';
import { PostgresIdempotencyStore, type BeginOutcome } from '../../src/stores/idempotency';

const POSTGRES_URL = process.env.DURABLE_TOOLS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const TABLE = `idem_concurrency_${process.pid}_${Date.now().toString(36)}`;
/**
 * Keys raced in turn: each is a fresh race of 64 begins, so more keys only repeat the race. 250 keep the suite
 * quick; `DT_CONTENTION_KEYS=1000` (or more) makes it a longer soak.
 */
const KEYS = Number(process.env.DT_CONTENTION_KEYS ?? 250);
const BEGINS_PER_KEY = 64;
/** Keys whose 64 begins are in flight at the same time. */
const KEYS_AT_ONCE = 8;

describe('the Postgres idempotency store under contention', () => {
  // Two "workers", each with its own pool of 8 connections, share the table. 256 begins queue for each pool's
  // 8 connections: on a loaded machine a begin may wait well past the default 5 s for one.
  const stores = [0, 1].map(
    () =>
      new PostgresIdempotencyStore({
        connectionString: POSTGRES_URL,
        table: TABLE,
        poolSize: 8,
        connectionTimeoutMs: 300_000,
      }),
  );
  const admin = new Pool({ connectionString: POSTGRES_URL, max: 1 });

  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    await admin.query(`DROP TABLE IF EXISTS "${TABLE}"`);
    await admin.end();
  });

  it(`gives exactly one started per key to 64 concurrent begins over 16 connections, for ${KEYS} keys`, async () => {
    const beginAll = (key: string): Promise<BeginOutcome[]> =>
      Promise.all(
        Array.from({ length: BEGINS_PER_KEY }, (_, i) =>
          (stores[i % stores.length] as PostgresIdempotencyStore).begin(key, 'fp', {
            owner: `w${i}`,
            leaseMs: 600_000,
          }),
        ),
      );
    const t0 = Date.now();
    const winners = new Map<string, string[]>();
    const others: Record<string, number> = {};
    let next = 0;
    await Promise.all(
      Array.from({ length: KEYS_AT_ONCE }, async () => {
        while (next < KEYS) {
          const key = `key-${next++}`;
          for (const outcome of await beginAll(key)) {
            if (outcome.state === 'started') winners.set(key, [...(winners.get(key) ?? []), outcome.token]);
            else others[outcome.state] = (others[outcome.state] ?? 0) + 1;
          }
        }
      }),
    );
    const elapsedMs = Date.now() - t0;

    expect([...winners.values()].filter((tokens) => tokens.length === 1)).toHaveLength(KEYS);
    expect(others).toEqual({ in_flight: KEYS * (BEGINS_PER_KEY - 1) });
    const { rows } = await admin.query<{ key: string; token: string }>(`SELECT key, token FROM "${TABLE}"`);
    expect(rows).toHaveLength(KEYS);
    for (const row of rows) expect(winners.get(row.key)).toEqual([row.token]);
    console.log(`Postgres: ${KEYS * BEGINS_PER_KEY} begins over 16 connections in ${elapsedMs} ms`);
  }, 600_000);
});
