import { Pool, type PoolClient } from 'pg';
import { createTablesSerialized, POSTGRES_IDENTIFIER } from '../create-tables';
import { withPooledClient } from '../pooled-client';
import { IDEMPOTENCY_DEFAULTS, IDEMPOTENCY_ENV } from '../idempotency/idempotency-defaults';
import type { TranscriptMessage } from '../../contract/model-types';
import type { StoredPayload, TranscriptStore } from './transcript-store';
import { TranscriptStoreError } from './transcript-store-error';
import {
  expiryOf,
  PAYLOAD_RETENTION,
  payloadRetention,
  type PayloadRetention,
  type PayloadRetentionOptions,
} from './payload-retention';

/** Defaults of the Postgres transcript store. */
export const POSTGRES_TRANSCRIPT_DEFAULTS = {
  /** Table of the store (the SQLite store's table has the same name and columns). */
  table: 'transcript_messages',
  /** Connections of the pool the store creates. */
  poolSize: 10,
  /** How long to wait for a connection before failing with `STORE_UNAVAILABLE` (pg's own default waits forever). */
  connectionTimeoutMs: 5_000,
  /** Postgres used when neither options nor `DURABLE_TOOLS_POSTGRES_URL` name one (the idempotency store's). */
  postgresUrl: IDEMPOTENCY_DEFAULTS.postgresUrl,
} as const;

/** Options of {@link PostgresTranscriptStore}. */
export interface PostgresTranscriptStoreOptions extends PayloadRetentionOptions {
  /** Default: `DURABLE_TOOLS_POSTGRES_URL`, else `postgres://postgres@127.0.0.1:5432/test`. Ignored with `pool`. */
  connectionString?: string;
  /** A pool to use instead of creating one; `close()` leaves it open. */
  pool?: Pool;
  /** Size of the pool the store creates. Default 10. */
  poolSize?: number;
  /** Table name (letters, digits, `_`, at most 48). Default `transcript_messages`. */
  table?: string;
  /** Schema of the table, created if missing. Default: the connection's search path (usually `public`). */
  schema?: string;
  /** Create the schema and table when missing (default true). Turn off where the role may not run DDL. */
  createTable?: boolean;
}

/**
 * A {@link TranscriptStore} for workers on more than one machine: one Postgres table, one row per message
 * (`run_key`, `seq`, `message`), reached through a `pg` pool.
 *
 * A `write` is one transaction that first takes a transaction-scoped advisory lock on the run, so concurrent
 * writers of one run (a retried model activity racing its predecessor, on any machine) apply one after the
 * other and the transcript is always one writer's whole result: no interleaving, no gaps. The count that
 * checks the prefix is a statement of its own after the lock, so under READ COMMITTED its snapshot includes
 * the previous writer's commit. Messages are stored as `json`, which keeps the text verbatim, so they read
 * back with the key order they were written with.
 *
 * @example
 * ```ts
 * const transcripts = new PostgresTranscriptStore({ connectionString: process.env.DURABLE_TOOLS_POSTGRES_URL });
 * ```
 */
export class PostgresTranscriptStore implements TranscriptStore {
  /** The quoted, schema-qualified table name. */
  readonly tableName: string;
  private readonly pool: Pool;
  private readonly ownsPool: boolean;
  private readonly sql: ReturnType<typeof statements>;
  private ready: Promise<void> | undefined;
  private closed = false;
  private readonly retention: PayloadRetention;

  constructor(options: PostgresTranscriptStoreOptions = {}) {
    this.retention = payloadRetention(options);
    const table = options.table ?? POSTGRES_TRANSCRIPT_DEFAULTS.table;
    const schema = options.schema;
    for (const name of schema === undefined ? [table] : [table, schema]) {
      if (!POSTGRES_IDENTIFIER.test(name)) {
        throw new TranscriptStoreError(`Invalid Postgres identifier "${name}".`, 'INVALID_CONFIG');
      }
    }
    this.tableName = schema === undefined ? `"${table}"` : `"${schema}"."${table}"`;
    const payloads = `${table}_payloads`;
    this.sql = statements(
      this.tableName,
      schema === undefined ? `"${payloads}"` : `"${schema}"."${payloads}"`,
      schema,
      `"${payloads}_expires_at"`,
    );
    if (options.pool) {
      this.pool = options.pool;
      this.ownsPool = false;
    } else {
      this.pool = new Pool({
        connectionString:
          options.connectionString ??
          process.env[IDEMPOTENCY_ENV.postgresUrl] ??
          POSTGRES_TRANSCRIPT_DEFAULTS.postgresUrl,
        max: options.poolSize ?? POSTGRES_TRANSCRIPT_DEFAULTS.poolSize,
        connectionTimeoutMillis: POSTGRES_TRANSCRIPT_DEFAULTS.connectionTimeoutMs,
      });
      this.ownsPool = true;
      // An idle connection that breaks emits 'error' on the pool; unhandled, it would crash the process.
      this.pool.on('error', () => undefined);
    }
    if (options.createTable === false) this.ready = Promise.resolve();
  }

  /** {@inheritDoc TranscriptStore.write} */
  async write(runKey: string, fromIndex: number, messages: readonly TranscriptMessage[]): Promise<boolean> {
    const json = messages.map((message) => JSON.stringify(message));
    return this.transaction(async (client) => {
      await client.query(this.sql.lock, [this.tableName, runKey]);
      const { rows } = await client.query<{ n: number }>(this.sql.count, [runKey]);
      if ((rows[0]?.n ?? 0) < fromIndex) return false;
      await client.query(this.sql.truncate, [runKey, fromIndex]);
      if (json.length > 0) await client.query(this.sql.insert, [runKey, fromIndex, json]);
      return true;
    });
  }

  /** {@inheritDoc TranscriptStore.read} */
  async read(runKey: string): Promise<TranscriptMessage[] | undefined> {
    const { rows } = await this.run((client) => client.query<{ message: string }>(this.sql.read, [runKey]));
    return rows.length === 0 ? undefined : rows.map((row) => JSON.parse(row.message) as TranscriptMessage);
  }

  /** {@inheritDoc TranscriptStore.putPayload} */
  async putPayload(handle: string, payload: StoredPayload): Promise<void> {
    const expiresAt = expiryOf(payload, this.retention);
    await this.run((client) => client.query(this.sql.putPayload, [handle, payload.runId, payload.text, expiresAt]));
  }

  /** {@inheritDoc TranscriptStore.getPayload} */
  async getPayload(handle: string): Promise<StoredPayload | undefined> {
    const { rows } = await this.run((client) =>
      client.query<{ run_id: string; text: string; expires_at: string }>(this.sql.getPayload, [
        handle,
        this.retention.clock(),
      ]),
    );
    const row = rows[0];
    return row ? { runId: row.run_id, text: row.text, expiresAt: Number(row.expires_at) } : undefined;
  }

  /** {@inheritDoc TranscriptStore.reapPayloads} */
  async reapPayloads(now: number = this.retention.clock()): Promise<number> {
    let total = 0;
    for (;;) {
      const { rowCount } = await this.run((client) =>
        client.query(this.sql.reapPayloads, [now, PAYLOAD_RETENTION.reapBatchSize]),
      );
      total += rowCount ?? 0;
      if ((rowCount ?? 0) < PAYLOAD_RETENTION.reapBatchSize) return total;
    }
  }

  /** {@inheritDoc TranscriptStore.delete} */
  async delete(runKey: string): Promise<void> {
    await this.run((client) => client.query(this.sql.delete, [runKey]));
  }

  /** {@inheritDoc TranscriptStore.close} */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsPool) await this.pool.end();
  }

  /** Runs `work` in one transaction on one connection; rolls back if it throws. */
  private async transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    return this.run(async (client) => {
      await client.query('BEGIN');
      try {
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  /** Runs `work` on a pooled connection (creating the table first if needed), wrapping failures. */
  private async run<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    if (this.closed) throw new TranscriptStoreError('The transcript store is closed.', 'STORE_CLOSED');
    try {
      await (this.ready ??= this.createTable());
      return await withPooledClient(this.pool, work);
    } catch (error) {
      throw new TranscriptStoreError(
        `The Postgres transcript store failed: ${(error as Error).message}`,
        'STORE_UNAVAILABLE',
        { cause: error },
      );
    }
  }

  private async createTable(): Promise<void> {
    try {
      // Payloads stored before they expired get the default retention from now.
      const backfill = `UPDATE ${this.sql.payloads} SET expires_at = ${this.retention.clock() + this.retention.retentionMs} WHERE expires_at IS NULL`;
      await createTablesSerialized(this.pool, `durable-tools:${this.tableName}`, [...this.sql.create, backfill]);
    } catch (error) {
      this.ready = undefined; // try again on the next call
      throw error;
    }
  }
}

function statements(qualified: string, payloads: string, schema: string | undefined, expiryIndex: string) {
  return {
    payloads,
    create: [
      ...(schema === undefined ? [] : [`CREATE SCHEMA IF NOT EXISTS "${schema}"`]),
      `CREATE TABLE IF NOT EXISTS ${qualified} (
        run_key TEXT NOT NULL,
        seq INTEGER NOT NULL,
        message JSON NOT NULL,
        PRIMARY KEY (run_key, seq)
      )`,
      `CREATE TABLE IF NOT EXISTS ${payloads} (handle TEXT PRIMARY KEY, run_id TEXT NOT NULL, text TEXT NOT NULL, expires_at BIGINT)`,
      // Tables created before payloads expired.
      `ALTER TABLE ${payloads} ADD COLUMN IF NOT EXISTS expires_at BIGINT`,
      `CREATE INDEX IF NOT EXISTS ${expiryIndex} ON ${payloads} (expires_at)`,
    ],
    putPayload: `INSERT INTO ${payloads} (handle, run_id, text, expires_at) VALUES ($1, $2, $3, $4)
      ON CONFLICT (handle) DO UPDATE SET run_id = EXCLUDED.run_id, text = EXCLUDED.text, expires_at = EXCLUDED.expires_at`,
    getPayload: `SELECT run_id, text, expires_at FROM ${payloads} WHERE handle = $1 AND expires_at > $2`,
    // $1 now, $2 batch size: one bounded batch per statement, so no reap holds locks on many rows.
    reapPayloads: `DELETE FROM ${payloads} WHERE handle IN (
      SELECT handle FROM ${payloads} WHERE expires_at <= $1 LIMIT $2)`,
    // $1 table name, $2 run key. The two-key form keeps these locks apart from other users of advisory locks.
    lock: 'SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))',
    count: `SELECT count(*)::int AS n FROM ${qualified} WHERE run_key = $1`,
    truncate: `DELETE FROM ${qualified} WHERE run_key = $1 AND seq >= $2`,
    // One multi-row INSERT whatever the number of messages: $3 is a text[] of JSON documents.
    insert: `
      INSERT INTO ${qualified} (run_key, seq, message)
      SELECT $1, $2::int + (m.ord - 1)::int, m.message::json
      FROM unnest($3::text[]) WITH ORDINALITY AS m(message, ord)`,
    read: `SELECT message::text AS message FROM ${qualified} WHERE run_key = $1 ORDER BY seq`,
    delete: `DELETE FROM ${qualified} WHERE run_key = $1`,
  };
}
