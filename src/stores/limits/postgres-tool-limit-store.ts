import { Pool, type PoolClient } from 'pg';
import { createTablesSerialized, POSTGRES_IDENTIFIER } from '../create-tables';
import { withPooledClient } from '../pooled-client';
import { breakerAfter, closedBreaker, decideSlot } from './limit-decision';
import type { BreakerState, CallOutcome, SlotDecision, SlotRequest, ToolLimitStore } from './tool-limit-store';

/** Options of {@link PostgresToolLimitStore}. */
export interface PostgresToolLimitStoreOptions {
  /** Default: `DURABLE_TOOLS_POSTGRES_URL`, else `postgres://postgres@127.0.0.1:5432/test`. Ignored with `pool`. */
  connectionString?: string;
  /** A pool to use instead of creating one; `close()` leaves it open. */
  pool?: Pool;
  /** Prefix of the four tables (default `tool_limit`). */
  tablePrefix?: string;
}

/** The database's clock in epoch ms: every worker of every machine reads the same one. */
const NOW = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

interface BreakerRow {
  scope: string;
  open_until: string;
  failures: number;
  opens: number;
  probe_holder: string | null;
  probe_expires: string;
  reason: string;
}

/**
 * The {@link ToolLimitStore} of workers on several machines: four Postgres tables. Each decision is one transaction
 * under an advisory lock of its scope (`pg_advisory_xact_lock`), so of any number of workers only one takes a
 * scope's last slot, and every time is the database's clock, so the machines' clocks need not agree.
 */
export class PostgresToolLimitStore implements ToolLimitStore {
  private readonly pool: Pool;
  private readonly ownsPool: boolean;
  private readonly p: string;
  private ready: Promise<void> | undefined;

  constructor(options: PostgresToolLimitStoreOptions = {}) {
    this.p = options.tablePrefix ?? 'tool_limit';
    if (!POSTGRES_IDENTIFIER.test(this.p)) throw new TypeError(`Invalid Postgres table prefix "${this.p}".`);
    this.ownsPool = !options.pool;
    this.pool =
      options.pool ??
      new Pool({
        connectionString:
          options.connectionString ??
          process.env['DURABLE_TOOLS_POSTGRES_URL'] ??
          'postgres://postgres@127.0.0.1:5432/test',
        max: 10,
      });
    if (this.ownsPool) this.pool.on('error', () => undefined);
  }

  acquire(request: SlotRequest): Promise<SlotDecision> {
    return this.inScope(request.scope, async (c, now) => {
      const { scope, holder, waiter } = request;
      await c.query(`DELETE FROM ${this.p}_slots WHERE scope = $1 AND expires_at <= $2`, [scope, now]);
      await c.query(`DELETE FROM ${this.p}_waiters WHERE scope = $1 AND seen < $2`, [
        scope,
        now - request.waiterStaleMs,
      ]);
      if (request.rate) {
        await c.query(`DELETE FROM ${this.p}_rate WHERE scope = $1 AND counts_until <= $2`, [scope, now]);
      }
      const mine = await c.query<{ since: string }>(
        `SELECT since FROM ${this.p}_waiters WHERE scope = $1 AND waiter = $2`,
        [scope, waiter],
      );
      const since = mine.rows[0] ? Number(mine.rows[0].since) : now;
      const window = request.rate
        ? (
            await c.query<{ count: string; oldest: string | null }>(
              `SELECT COUNT(*) AS count, MIN(counts_until) AS oldest FROM ${this.p}_rate WHERE scope = $1`,
              [scope],
            )
          ).rows[0]!
        : { count: '0', oldest: null };
      const running = await c.query<{ count: string }>(
        `SELECT COUNT(*) AS count FROM ${this.p}_slots WHERE scope = $1 AND holder <> $2`,
        [scope, holder],
      );
      const ahead = await c.query<{ count: string }>(
        `SELECT COUNT(*) AS count FROM ${this.p}_waiters WHERE scope = $1 AND (since < $2 OR (since = $2 AND waiter < $3)) AND waiter <> $3`,
        [scope, since, waiter],
      );
      let breaker = await this.breakerOf(c, scope);
      if (breaker.probeHolder !== null && breaker.probeExpires <= now)
        breaker = { ...breaker, probeHolder: null, probeExpires: 0 };
      const decision = decideSlot(request, {
        now,
        running: Number(running.rows[0]!.count),
        startsInWindow: Number(window.count),
        oldestStart: window.oldest === null ? undefined : Number(window.oldest),
        ahead: Number(ahead.rows[0]!.count),
        breaker,
      });
      if (!decision.granted) {
        await c.query(
          `INSERT INTO ${this.p}_waiters (scope, waiter, since, seen) VALUES ($1, $2, $3, $4)
           ON CONFLICT (scope, waiter) DO UPDATE SET seen = excluded.seen`,
          [scope, waiter, since, now],
        );
        return decision;
      }
      await c.query(`DELETE FROM ${this.p}_waiters WHERE scope = $1 AND waiter = $2`, [scope, waiter]);
      await c.query(
        `INSERT INTO ${this.p}_slots (scope, holder, expires_at) VALUES ($1, $2, $3)
         ON CONFLICT (scope, holder) DO UPDATE SET expires_at = excluded.expires_at`,
        [scope, holder, now + request.leaseMs],
      );
      if (request.rate) {
        const { periodMs } = request.rate;
        await c.query(`INSERT INTO ${this.p}_rate (scope, holder, counts_until, period_ms) VALUES ($1, $2, $3, $4)`, [
          scope,
          holder,
          now + 2 * periodMs,
          periodMs,
        ]);
      }
      if (decision.probe)
        await this.writeBreaker(c, { ...breaker, probeHolder: holder, probeExpires: now + request.leaseMs });
      return decision;
    });
  }

  renew(scope: string, holder: string, leaseMs: number): Promise<boolean> {
    return this.inScope(scope, async (c, now) => {
      const renewed = await c.query(
        `UPDATE ${this.p}_slots SET expires_at = $1 WHERE scope = $2 AND holder = $3 AND expires_at > $4`,
        [now + leaseMs, scope, holder, now],
      );
      if (renewed.rowCount === 1) {
        await c.query(`UPDATE ${this.p}_breakers SET probe_expires = $1 WHERE scope = $2 AND probe_holder = $3`, [
          now + leaseMs,
          scope,
          holder,
        ]);
      }
      return renewed.rowCount === 1;
    });
  }

  release(scope: string, holder: string, outcome: CallOutcome, breaker: boolean): Promise<boolean> {
    return this.inScope(scope, async (c, now) => {
      await c.query(`DELETE FROM ${this.p}_slots WHERE scope = $1 AND holder = $2`, [scope, holder]);
      await c.query(
        `UPDATE ${this.p}_rate SET counts_until = LEAST(counts_until, $1 + period_ms) WHERE scope = $2 AND holder = $3`,
        [now, scope, holder],
      );
      if (!breaker) return false;
      const current = await this.breakerOf(c, scope);
      const after = breakerAfter(current, holder, outcome, now);
      await this.writeBreaker(c, after);
      return after.opens > current.opens;
    });
  }

  leave(scope: string, waiter: string): Promise<void> {
    return this.inScope(scope, async (c) => {
      await c.query(`DELETE FROM ${this.p}_waiters WHERE scope = $1 AND waiter = $2`, [scope, waiter]);
    });
  }

  async openBreakers(): Promise<BreakerState[]> {
    await (this.ready ??= this.createTables());
    const rows = await this.pool.query<BreakerRow>(`SELECT * FROM ${this.p}_breakers WHERE open_until > 0`);
    return rows.rows.map(breakerOfRow);
  }

  async close(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
  }

  /** Runs `work` in one transaction holding the scope's advisory lock, with the database's time. */
  private async inScope<T>(scope: string, work: (client: PoolClient, now: number) => Promise<T>): Promise<T> {
    await (this.ready ??= this.createTables());
    return withPooledClient(this.pool, async (client) => {
      await client.query('BEGIN');
      try {
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`durable-tools:limit:${scope}`]);
        const now = Number((await client.query<{ now: string }>(`SELECT ${NOW} AS now`)).rows[0]!.now);
        const result = await work(client, now);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  private async breakerOf(c: PoolClient, scope: string): Promise<BreakerState> {
    const row = (await c.query<BreakerRow>(`SELECT * FROM ${this.p}_breakers WHERE scope = $1`, [scope])).rows[0];
    return row ? breakerOfRow(row) : closedBreaker(scope);
  }

  private async writeBreaker(c: PoolClient, b: BreakerState): Promise<void> {
    await c.query(
      `INSERT INTO ${this.p}_breakers (scope, open_until, failures, opens, probe_holder, probe_expires, reason)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (scope) DO UPDATE SET open_until = excluded.open_until,
       failures = excluded.failures, opens = excluded.opens, probe_holder = excluded.probe_holder,
       probe_expires = excluded.probe_expires, reason = excluded.reason`,
      [b.scope, b.openUntil, b.failures, b.opens, b.probeHolder, b.probeExpires, b.reason],
    );
  }

  private async createTables(): Promise<void> {
    const p = this.p;
    try {
      await createTablesSerialized(this.pool, `durable-tools:${p}`, [
        `CREATE TABLE IF NOT EXISTS ${p}_slots (scope TEXT NOT NULL, holder TEXT NOT NULL, expires_at BIGINT NOT NULL, PRIMARY KEY (scope, holder))`,
        `CREATE TABLE IF NOT EXISTS ${p}_rate (scope TEXT NOT NULL, holder TEXT NOT NULL, counts_until BIGINT NOT NULL, period_ms BIGINT NOT NULL)`,
        `CREATE INDEX IF NOT EXISTS ${p}_rate_scope ON ${p}_rate (scope, counts_until)`,
        `CREATE TABLE IF NOT EXISTS ${p}_waiters (scope TEXT NOT NULL, waiter TEXT NOT NULL, since BIGINT NOT NULL, seen BIGINT NOT NULL, PRIMARY KEY (scope, waiter))`,
        `CREATE INDEX IF NOT EXISTS ${p}_waiters_line ON ${p}_waiters (scope, since, waiter)`,
        `CREATE TABLE IF NOT EXISTS ${p}_breakers (scope TEXT PRIMARY KEY, open_until BIGINT NOT NULL, failures INTEGER NOT NULL, opens INTEGER NOT NULL, probe_holder TEXT, probe_expires BIGINT NOT NULL, reason TEXT NOT NULL)`,
      ]);
    } catch (error) {
      this.ready = undefined;
      throw error;
    }
  }
}

function breakerOfRow(row: BreakerRow): BreakerState {
  return {
    scope: row.scope,
    openUntil: Number(row.open_until),
    failures: row.failures,
    opens: row.opens,
    probeHolder: row.probe_holder,
    probeExpires: Number(row.probe_expires),
    reason: row.reason,
  };
}
