import { Client, Pool, type PoolClient } from 'pg';
import { createTablesSerialized, POSTGRES_IDENTIFIER } from '../create-tables';
import { withPooledClient } from '../pooled-client';
import { IDEMPOTENCY_DEFAULTS, IDEMPOTENCY_ENV } from '../idempotency/idempotency-defaults';
import type { AgentStreamEvent, AgentStreamEventData } from './stream-events';
import type { StreamStore } from './stream-store';
import {
  STREAM_RETENTION,
  streamRetention,
  type StreamRetention,
  type StreamRetentionOptions,
} from './stream-retention';
import { StreamStoreError } from './stream-store-error';
import { sleepOrAbort } from './stream-wait';

/** Defaults of the Postgres stream store. */
export const POSTGRES_STREAM_DEFAULTS = {
  /** Prefix of the store's two tables (`<prefix>_heads`, `<prefix>_events`) and its notification channel. */
  table: 'stream',
  poolSize: 5,
  connectionTimeoutMs: 5_000,
  postgresUrl: IDEMPOTENCY_DEFAULTS.postgresUrl,
  /** A waiting reader also looks every this many ms, in case a notification was lost (default 1 s). */
  fallbackPollMs: 1_000,
} as const;

/** Options of {@link PostgresStreamStore}. */
export interface PostgresStreamStoreOptions extends StreamRetentionOptions {
  /** Default: `DURABLE_TOOLS_POSTGRES_URL`, else `postgres://postgres@127.0.0.1:5432/test`. */
  connectionString?: string;
  /** Size of the pool the store creates (default 5); readers add one listening connection. */
  poolSize?: number;
  /** Prefix of the tables and of the notification channel (letters, digits, `_`; default `stream`). */
  table?: string;
  /** Create the tables when missing (default true). */
  createTable?: boolean;
}

/**
 * A stream store in Postgres for workers and readers on several machines: one table of events and one of
 * stream heads (which hand out the offsets, one writer at a time per stream), and `NOTIFY` on every append so
 * a reader waiting with `LISTEN` wakes at once.
 */
export class PostgresStreamStore implements StreamStore {
  private readonly pool: Pool;
  private readonly retention: StreamRetention;
  private readonly connectionString: string;
  private readonly channel: string;
  private readonly sql: ReturnType<typeof statements>;
  private ready: Promise<void> | undefined;
  private listener: Promise<Client> | undefined;
  private readonly waiters = new Map<string, Set<() => void>>();
  private appends = 0;
  private closed = false;

  /** @throws {@link StreamStoreError} `INVALID_CONFIG` for an invalid table prefix or bound. */
  constructor(options: PostgresStreamStoreOptions = {}) {
    this.retention = streamRetention(options);
    const table = options.table ?? POSTGRES_STREAM_DEFAULTS.table;
    if (!POSTGRES_IDENTIFIER.test(table) || table.length > 40) {
      throw new StreamStoreError(`Invalid Postgres identifier "${table}".`, 'INVALID_CONFIG');
    }
    this.channel = `${table}_appended`.toLowerCase();
    this.sql = statements(table, this.channel);
    this.connectionString =
      options.connectionString ?? process.env[IDEMPOTENCY_ENV.postgresUrl] ?? POSTGRES_STREAM_DEFAULTS.postgresUrl;
    this.pool = new Pool({
      connectionString: this.connectionString,
      max: options.poolSize ?? POSTGRES_STREAM_DEFAULTS.poolSize,
      connectionTimeoutMillis: POSTGRES_STREAM_DEFAULTS.connectionTimeoutMs,
    });
    this.pool.on('error', () => undefined);
    if (options.createTable === false) this.ready = Promise.resolve();
  }

  async append(stream: string, events: readonly AgentStreamEventData[]): Promise<number> {
    const at = this.retention.clock();
    const last = await this.run(async (client) => {
      await client.query('BEGIN');
      try {
        const { rows } = await client.query<{ last_seq: string }>(this.sql.bump, [stream, events.length, at]);
        const newLast = Number(rows[0]?.last_seq ?? 0);
        if (events.length > 0) {
          const json = events.map((event) => JSON.stringify(event));
          await client.query(this.sql.insert, [stream, newLast - events.length, at, json]);
          if (newLast > this.retention.maxEventsPerRun) {
            await client.query(this.sql.trim, [stream, newLast - this.retention.maxEventsPerRun]);
          }
          await client.query('SELECT pg_notify($1, $2)', [this.channel, stream]);
        }
        await client.query('COMMIT');
        return newLast;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
    this.appends += 1;
    if (this.appends % STREAM_RETENTION.sweepEveryAppends === 0) await this.sweep(at);
    return last;
  }

  async head(stream: string): Promise<number> {
    return this.lastOffset(stream);
  }

  async read(stream: string, from: number, limit = 1000): Promise<AgentStreamEvent[]> {
    const cutoff = this.retention.clock() - this.retention.retentionMs;
    const { rows } = await this.run((client) =>
      client.query<{ seq: string; at: string; event: string }>(this.sql.read, [stream, from, cutoff, limit]),
    );
    return rows.map((row) => ({
      ...(JSON.parse(row.event) as AgentStreamEventData),
      offset: Number(row.seq),
      at: Number(row.at),
    }));
  }

  async waitFor(
    stream: string,
    from: number,
    options: { signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<void> {
    const until = Date.now() + (options.timeoutMs ?? 60_000);
    let wake: () => void = () => {};
    const woken = new Promise<void>((resolve) => (wake = resolve));
    const set = this.waiters.get(stream) ?? new Set();
    set.add(wake);
    this.waiters.set(stream, set);
    try {
      await this.listen();
      while (!this.closed && !options.signal?.aborted && Date.now() < until) {
        if ((await this.lastOffset(stream)) >= from) return;
        const pause = Math.min(POSTGRES_STREAM_DEFAULTS.fallbackPollMs, Math.max(0, until - Date.now()));
        const done = new AbortController(); // ends the timer when woken first
        const signal = options.signal ? AbortSignal.any([options.signal, done.signal]) : done.signal;
        await Promise.race([woken, sleepOrAbort(pause, signal)]).finally(() => done.abort());
        if ((await this.lastOffset(stream)) >= from) return;
      }
    } finally {
      set.delete(wake);
      if (set.size === 0) this.waiters.delete(stream);
    }
  }

  async sweep(now: number = this.retention.clock()): Promise<number> {
    const { rowCount } = await this.run((client) => client.query(this.sql.sweep, [now - this.retention.retentionMs]));
    return rowCount ?? 0;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const set of this.waiters.values()) for (const wake of set) wake();
    const listener = await this.listener?.catch(() => undefined);
    await listener?.end().catch(() => undefined);
    await this.pool.end();
  }

  private async lastOffset(stream: string): Promise<number> {
    const { rows } = await this.run((client) => client.query<{ last_seq: string }>(this.sql.head, [stream]));
    return Number(rows[0]?.last_seq ?? 0);
  }

  /** One connection per store that LISTENs and wakes the waiters of the stream a notification names. */
  private listen(): Promise<Client> {
    this.listener ??= (async () => {
      const client = new Client({ connectionString: this.connectionString });
      client.on('error', () => {
        this.listener = undefined; // the next waiter connects again; waiters poll meanwhile
      });
      client.on('notification', (message) => {
        for (const wake of this.waiters.get(message.payload ?? '') ?? []) wake();
      });
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
      return client;
    })();
    return this.listener.catch(() => {
      this.listener = undefined;
      return undefined as unknown as Client;
    });
  }

  private async run<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    if (this.closed) throw new StreamStoreError('The stream store is closed.', 'STORE_CLOSED');
    try {
      await (this.ready ??= createTablesSerialized(this.pool, this.sql.lockName, this.sql.create).catch((error) => {
        this.ready = undefined;
        throw error;
      }));
      return await withPooledClient(this.pool, work);
    } catch (error) {
      throw new StreamStoreError(`The Postgres stream store failed: ${(error as Error).message}`, 'STORE_UNAVAILABLE', {
        cause: error,
      });
    }
  }
}

function statements(prefix: string, channel: string) {
  const heads = `"${prefix}_heads"`;
  const events = `"${prefix}_events"`;
  return {
    lockName: `durable-tools:${prefix}`,
    channel,
    create: [
      `CREATE TABLE IF NOT EXISTS ${heads} (stream text PRIMARY KEY, last_seq bigint NOT NULL, updated_at bigint NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS ${events} (stream text NOT NULL, seq bigint NOT NULL, at bigint NOT NULL, event text NOT NULL, PRIMARY KEY (stream, seq))`,
      `CREATE INDEX IF NOT EXISTS "${prefix}_events_at" ON ${events} (at)`,
    ],
    head: `SELECT last_seq FROM ${heads} WHERE stream = $1`,
    bump: `INSERT INTO ${heads} (stream, last_seq, updated_at) VALUES ($1, $2, $3) ON CONFLICT (stream) DO UPDATE SET last_seq = ${heads}.last_seq + excluded.last_seq, updated_at = excluded.updated_at RETURNING last_seq`,
    insert: `INSERT INTO ${events} (stream, seq, at, event) SELECT $1, $2::bigint + n, $3, e FROM unnest($4::text[]) WITH ORDINALITY AS t(e, n)`,
    trim: `DELETE FROM ${events} WHERE stream = $1 AND seq <= $2`,
    read: `SELECT seq, at, event FROM ${events} WHERE stream = $1 AND seq >= $2 AND at > $3 ORDER BY seq LIMIT $4`,
    sweep: `DELETE FROM ${events} WHERE at <= $1`,
  };
}
