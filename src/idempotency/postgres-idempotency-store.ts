import { randomUUID } from 'node:crypto';
import { Pool, type PoolConfig } from 'pg';
import { IDEMPOTENCY_DEFAULTS, IDEMPOTENCY_ENV } from './idempotency-defaults';
import {
  acceptRepeatedFinish,
  checkBegin,
  checkDuration,
  checkKey,
  checkToken,
  retentionFrom,
  serializeFailure,
  serializeResult,
  type IdempotencyStoreBaseOptions,
  type RecordState,
} from './idempotency-record';
import type { BeginOptions, BeginOutcome, IdempotencyStore, StoredFailure } from './idempotency-store';
import { IdempotencyStoreError } from './idempotency-store-error';

/** Defaults specific to the Postgres store. */
export const POSTGRES_STORE_DEFAULTS = {
  /** Connections of the pool the store creates. */
  poolSize: 10,
  /** How long to wait for a connection before failing with `STORE_UNAVAILABLE` (pg's own default waits forever). */
  connectionTimeoutMs: 5_000,
  /** Rows deleted per `reap` statement. */
  reapBatchSize: 1_000,
} as const;

/** Options of {@link PostgresIdempotencyStore}. */
export interface PostgresIdempotencyStoreOptions extends IdempotencyStoreBaseOptions {
  /** Default: `DURABLE_TOOLS_POSTGRES_URL`, else `postgres://postgres@127.0.0.1:5432/test`. Ignored with `pool`. */
  connectionString?: string;
  /** A pool to use instead of creating one; `close()` leaves it open. */
  pool?: Pool;
  /** Size of the pool the store creates. Default 10. */
  poolSize?: number;
  /** Table name (letters, digits, `_`, at most 48). Default `idempotency_keys`. */
  table?: string;
  /** Schema of the table, created if missing. Default: the connection's search path (usually `public`). */
  schema?: string;
  /** Create the schema and table when missing (default true). Turn off where the role may not run DDL. */
  createTable?: boolean;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,47}$/;

/** What every `begin` returns: the row after the upsert. Bigints arrive as strings. */
interface BeginRow {
  fingerprint: string;
  state: RecordState;
  token: string;
  owner: string;
  previous_owner: string | null;
  lease_expires_at: string | null;
  result_json: unknown;
  error_json: unknown;
  takeovers: number;
}

/**
 * The {@link IdempotencyStore} for more than one machine: one Postgres table, reached through a `pg` pool.
 *
 * `begin` is ONE statement, `INSERT … ON CONFLICT (key) DO UPDATE SET col = CASE … END … RETURNING …`:
 * - no row: the insert wins, whoever else races for the key waits on the unique index and then sees the row;
 * - a row past retention ("fresh") or an in-progress row with the same fingerprint and an expired lease
 *   ("takeover"): the CASEs overwrite owner, token and lease;
 * - any other row: the CASEs keep every column; the row is only locked and returned.
 * `ON CONFLICT DO UPDATE` locks the conflicting row and evaluates the CASEs on its latest committed version,
 * so of 64 concurrent begins exactly one gets the row with its own token: that one `started` (or took over);
 * the others read the winner's row and answer conflict / completed / failed / in_flight from it.
 * Writes that need ownership are `UPDATE … WHERE key = $1 AND token = $2 AND state = 'in_progress'`.
 *
 * Timestamps come from the store's clock (the worker's), so keep worker clocks in sync (NTP) and leases
 * much longer than the skew. Results are stored as `json` (text kept verbatim), so a replay has the key order
 * of the original.
 *
 * @example
 * ```ts
 * const store = new PostgresIdempotencyStore({ connectionString: process.env.DURABLE_TOOLS_POSTGRES_URL });
 * ```
 */
export class PostgresIdempotencyStore implements IdempotencyStore {
  /** The quoted, schema-qualified table name. */
  readonly tableName: string;
  private readonly pool: Pool;
  private readonly ownsPool: boolean;
  private readonly retentionMs: number;
  private readonly clock: () => number;
  private readonly sql: ReturnType<typeof statements>;
  private ready: Promise<void> | undefined;
  private closed = false;

  constructor(options: PostgresIdempotencyStoreOptions = {}) {
    const table = options.table ?? IDEMPOTENCY_DEFAULTS.table;
    const schema = options.schema;
    for (const name of schema === undefined ? [table] : [table, schema]) {
      if (!IDENTIFIER.test(name)) {
        throw new IdempotencyStoreError(`Invalid Postgres identifier "${name}".`, 'INVALID_CONFIG');
      }
    }
    this.retentionMs = retentionFrom(options);
    this.clock = options.clock ?? Date.now;
    this.tableName = schema === undefined ? `"${table}"` : `"${schema}"."${table}"`;
    this.sql = statements(this.tableName, table, schema);
    if (options.pool) {
      this.pool = options.pool;
      this.ownsPool = false;
    } else {
      const config: PoolConfig = {
        connectionString:
          options.connectionString ?? process.env[IDEMPOTENCY_ENV.postgresUrl] ?? IDEMPOTENCY_DEFAULTS.postgresUrl,
        max: checkDuration(options.poolSize ?? POSTGRES_STORE_DEFAULTS.poolSize, 'poolSize'),
        connectionTimeoutMillis: POSTGRES_STORE_DEFAULTS.connectionTimeoutMs,
      };
      this.pool = new Pool(config);
      this.ownsPool = true;
      // An idle connection that breaks emits 'error' on the pool; unhandled, it would crash the process.
      // The pool drops that connection by itself and the next query opens a new one.
      this.pool.on('error', () => undefined);
    }
    if (options.createTable === false) this.ready = Promise.resolve();
  }

  /** {@inheritDoc IdempotencyStore.begin} */
  async begin(key: string, fingerprint: string, options: BeginOptions): Promise<BeginOutcome> {
    const request = checkBegin(key, fingerprint, options);
    const token = randomUUID();
    const rows = await this.query<BeginRow>(this.sql.begin, () => {
      const now = this.clock();
      const leaseExpiresAt = now + request.leaseMs;
      return [
        request.key,
        request.fingerprint,
        token,
        request.owner,
        leaseExpiresAt,
        now,
        leaseExpiresAt + this.retentionMs,
      ];
    });
    const row = rows[0];
    if (row === undefined) throw new IdempotencyStoreError('The begin upsert returned no row.', 'STORE_UNAVAILABLE');
    const leaseExpiresAt = Number(row.lease_expires_at);
    if (row.token === token) {
      return row.takeovers === 0
        ? { state: 'started', token, leaseExpiresAt }
        : {
            state: 'outcome_unknown',
            token,
            leaseExpiresAt,
            previousOwner: row.previous_owner ?? '',
            takeovers: row.takeovers,
          };
    }
    if (row.fingerprint !== request.fingerprint) return { state: 'conflict', storedFingerprint: row.fingerprint };
    switch (row.state) {
      case 'completed':
        return { state: 'completed', result: row.result_json ?? undefined };
      case 'failed':
        return { state: 'failed', error: row.error_json as StoredFailure };
      case 'in_progress':
        return { state: 'in_flight', leaseExpiresAt, owner: row.owner };
    }
  }

  /** {@inheritDoc IdempotencyStore.heartbeat} */
  async heartbeat(key: string, token: string, leaseMs: number = IDEMPOTENCY_DEFAULTS.leaseMs): Promise<boolean> {
    const [k, t, lease] = [checkKey(key), checkToken(token), checkDuration(leaseMs, 'leaseMs')];
    const rows = await this.query(this.sql.heartbeat, () => {
      const now = this.clock();
      return [k, t, now, now + lease, now + lease + this.retentionMs];
    });
    return rows.length === 1;
  }

  /** {@inheritDoc IdempotencyStore.complete} */
  async complete(key: string, token: string, result: unknown): Promise<void> {
    await this.finish(checkKey(key), checkToken(token), 'completed', serializeResult(result), null);
  }

  /** {@inheritDoc IdempotencyStore.fail} */
  async fail(key: string, token: string, error: StoredFailure): Promise<void> {
    await this.finish(checkKey(key), checkToken(token), 'failed', null, serializeFailure(error));
  }

  /** {@inheritDoc IdempotencyStore.release} */
  async release(key: string, token: string): Promise<boolean> {
    const [k, t] = [checkKey(key), checkToken(token)];
    const rows = await this.query(this.sql.release, () => [k, t, this.clock()]);
    return rows.length === 1;
  }

  /** {@inheritDoc IdempotencyStore.reap} */
  async reap(now?: number): Promise<number> {
    const at = now ?? this.clock();
    const batch = POSTGRES_STORE_DEFAULTS.reapBatchSize;
    let total = 0;
    for (;;) {
      const deleted = (await this.query(this.sql.reap, () => [at, batch])).length;
      total += deleted;
      if (deleted < batch) return total;
    }
  }

  /** {@inheritDoc IdempotencyStore.close} */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsPool) await this.pool.end();
  }

  private async finish(
    key: string,
    token: string,
    state: 'completed' | 'failed',
    result: string | null,
    error: string | null,
  ): Promise<void> {
    let now = 0;
    const updated = await this.query(this.sql.finish, () => {
      now = this.clock();
      return [key, token, state, result, error, now, now + this.retentionMs];
    });
    if (updated.length === 1) return;
    const [current] = await this.query<{ state: RecordState; token: string; owner: string }>(
      this.sql.ownership,
      () => [key, now],
    );
    acceptRepeatedFinish(key, current, token, state);
  }

  /** Runs one statement (creating the table first if needed); `params` is called just before sending. */
  private async query<R = unknown>(text: string, params: () => unknown[]): Promise<R[]> {
    if (this.closed) throw new IdempotencyStoreError('The idempotency store is closed.', 'STORE_CLOSED');
    try {
      await (this.ready ??= this.createTable());
      const result = await this.pool.query(text, params());
      return result.rows as R[];
    } catch (error) {
      if (error instanceof IdempotencyStoreError) throw error;
      throw new IdempotencyStoreError(
        `The Postgres idempotency store failed: ${(error as Error).message}`,
        'STORE_UNAVAILABLE',
        { cause: error },
      );
    }
  }

  private async createTable(): Promise<void> {
    const client = await this.pool.connect().catch((error: unknown) => {
      this.ready = undefined; // try again on the next call
      throw error;
    });
    try {
      await client.query('BEGIN');
      // Concurrent CREATE … IF NOT EXISTS can still collide in the catalog: serialise set-up across processes.
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`durable-tools:${this.tableName}`]);
      for (const statement of this.sql.create) await client.query(statement);
      await client.query('COMMIT');
    } catch (error) {
      this.ready = undefined;
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}

function statements(qualified: string, table: string, schema: string | undefined) {
  const fresh = 'r.expires_at <= EXCLUDED.updated_at';
  const takeover = `(r.state = 'in_progress' AND r.fingerprint = EXCLUDED.fingerprint AND r.lease_expires_at <= EXCLUDED.updated_at)`;
  const claim = `(${fresh} OR ${takeover})`;
  const columns = 'key, fingerprint, state, token, owner, previous_owner, lease_expires_at, takeovers';
  return {
    create: [
      ...(schema === undefined ? [] : [`CREATE SCHEMA IF NOT EXISTS "${schema}"`]),
      `CREATE TABLE IF NOT EXISTS ${qualified} (
        key TEXT PRIMARY KEY,
        fingerprint TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('in_progress', 'completed', 'failed')),
        token TEXT NOT NULL,
        owner TEXT NOT NULL,
        previous_owner TEXT,
        lease_expires_at BIGINT,
        result_json JSON,
        error_json JSON,
        takeovers INTEGER NOT NULL DEFAULT 0,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
      )`,
      `CREATE INDEX IF NOT EXISTS "${table}_expires_at" ON ${qualified} (expires_at)`,
    ],
    // $1 key, $2 fingerprint, $3 token, $4 owner, $5 lease_expires_at, $6 now, $7 expires_at
    begin: `
      INSERT INTO ${qualified} AS r (${columns}, created_at, updated_at, expires_at)
      VALUES ($1, $2, 'in_progress', $3, $4, NULL, $5, 0, $6, $6, $7)
      ON CONFLICT (key) DO UPDATE SET
        fingerprint = CASE WHEN ${fresh} THEN EXCLUDED.fingerprint ELSE r.fingerprint END,
        state = CASE WHEN ${fresh} THEN EXCLUDED.state ELSE r.state END,
        token = CASE WHEN ${claim} THEN EXCLUDED.token ELSE r.token END,
        owner = CASE WHEN ${claim} THEN EXCLUDED.owner ELSE r.owner END,
        previous_owner = CASE WHEN ${fresh} THEN NULL WHEN ${takeover} THEN r.owner ELSE r.previous_owner END,
        lease_expires_at = CASE WHEN ${claim} THEN EXCLUDED.lease_expires_at ELSE r.lease_expires_at END,
        result_json = CASE WHEN ${fresh} THEN NULL ELSE r.result_json END,
        error_json = CASE WHEN ${fresh} THEN NULL ELSE r.error_json END,
        takeovers = CASE WHEN ${fresh} THEN 0 WHEN ${takeover} THEN r.takeovers + 1 ELSE r.takeovers END,
        created_at = CASE WHEN ${fresh} THEN EXCLUDED.created_at ELSE r.created_at END,
        updated_at = CASE WHEN ${claim} THEN EXCLUDED.updated_at ELSE r.updated_at END,
        expires_at = CASE WHEN ${claim} THEN EXCLUDED.expires_at ELSE r.expires_at END
      RETURNING ${columns}, result_json, error_json`,
    // $1 key, $2 token, $3 now, $4 lease_expires_at, $5 expires_at
    heartbeat: `
      UPDATE ${qualified} SET lease_expires_at = $4, updated_at = $3, expires_at = $5
      WHERE key = $1 AND token = $2 AND state = 'in_progress' AND expires_at > $3
      RETURNING key`,
    // $1 key, $2 token, $3 state, $4 result, $5 error, $6 now, $7 expires_at
    finish: `
      UPDATE ${qualified}
      SET state = $3, result_json = $4::json, error_json = $5::json, lease_expires_at = NULL,
        updated_at = $6, expires_at = $7
      WHERE key = $1 AND token = $2 AND state = 'in_progress' AND expires_at > $6
      RETURNING key`,
    ownership: `SELECT state, token, owner FROM ${qualified} WHERE key = $1 AND expires_at > $2`,
    release: `
      DELETE FROM ${qualified} WHERE key = $1 AND token = $2 AND state = 'in_progress' AND expires_at > $3
      RETURNING key`,
    reap: `
      DELETE FROM ${qualified} WHERE expires_at <= $1 AND key IN (
        SELECT key FROM ${qualified} WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)
      RETURNING key`,
  };
}
