import Database from 'better-sqlite3';
import { preparePrivateStateFile } from '../private-state';
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

/** Defaults of the SQLite stream store. */
export const SQLITE_STREAM_DEFAULTS = {
  path: '.data/streams.sqlite',
  busyTimeoutMs: 5000,
  /** How often a waiting reader looks for new events (default 20 ms). */
  pollMs: 20,
} as const;

/** Options of {@link SqliteStreamStore}. */
export interface SqliteStreamStoreOptions extends StreamRetentionOptions {
  /** The file (default `.data/streams.sqlite`), shared by the workers and readers of one machine. */
  path?: string;
  /** How often a waiting reader looks for new events, in ms (default 20). */
  pollMs?: number;
}

/**
 * A stream store in a SQLite file (WAL mode): workers and readers of one machine share it across processes;
 * a waiting reader polls the stream's head (one indexed read) every `pollMs`. The file and its -wal / -shm
 * files are 0600. Workers on several machines need the Postgres store.
 */
export class SqliteStreamStore implements StreamStore {
  private readonly db: Database.Database;
  private readonly retention: StreamRetention;
  private readonly pollMs: number;
  private appends = 0;
  private closed = false;
  private readonly sql: {
    head: Database.Statement;
    bump: Database.Statement;
    insert: Database.Statement;
    trim: Database.Statement;
    read: Database.Statement;
    sweep: Database.Statement;
  };

  /** @throws {@link StreamStoreError} `INVALID_CONFIG` for a bound that is not a positive number. */
  constructor(options: SqliteStreamStoreOptions = {}) {
    this.retention = streamRetention(options);
    this.pollMs = options.pollMs ?? SQLITE_STREAM_DEFAULTS.pollMs;
    const path = options.path ?? SQLITE_STREAM_DEFAULTS.path;
    if (path !== ':memory:') preparePrivateStateFile(path);
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma(`busy_timeout = ${SQLITE_STREAM_DEFAULTS.busyTimeoutMs}`);
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS stream_heads (stream TEXT PRIMARY KEY, last_seq INTEGER NOT NULL, updated_at INTEGER NOT NULL)',
    );
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS stream_events (stream TEXT NOT NULL, seq INTEGER NOT NULL, at INTEGER NOT NULL, event TEXT NOT NULL, PRIMARY KEY (stream, seq))',
    );
    this.db.exec('CREATE INDEX IF NOT EXISTS stream_events_at ON stream_events (at)');
    this.sql = {
      head: this.db.prepare('SELECT last_seq FROM stream_heads WHERE stream = ?'),
      bump: this.db.prepare(
        'INSERT INTO stream_heads (stream, last_seq, updated_at) VALUES (?, ?, ?) ON CONFLICT (stream) DO UPDATE SET last_seq = last_seq + excluded.last_seq, updated_at = excluded.updated_at RETURNING last_seq',
      ),
      insert: this.db.prepare('INSERT INTO stream_events (stream, seq, at, event) VALUES (?, ?, ?, ?)'),
      trim: this.db.prepare('DELETE FROM stream_events WHERE stream = ? AND seq <= ?'),
      read: this.db.prepare(
        'SELECT seq, at, event FROM stream_events WHERE stream = ? AND seq >= ? AND at > ? ORDER BY seq LIMIT ?',
      ),
      sweep: this.db.prepare(
        'DELETE FROM stream_events WHERE rowid IN (SELECT rowid FROM stream_events WHERE at <= ? LIMIT 1000)',
      ),
    };
  }

  async append(stream: string, events: readonly AgentStreamEventData[]): Promise<number> {
    this.assertOpen();
    if (events.length === 0) return this.lastOffset(stream);
    const at = this.retention.clock();
    const last = this.db
      .transaction(() => {
        const { last_seq: newLast } = this.sql.bump.get(stream, events.length, at) as { last_seq: number };
        let seq = newLast - events.length;
        for (const event of events) this.sql.insert.run(stream, (seq += 1), at, JSON.stringify(event));
        if (newLast > this.retention.maxEventsPerRun)
          this.sql.trim.run(stream, newLast - this.retention.maxEventsPerRun);
        return newLast;
      })
      .immediate();
    this.appends += 1;
    if (this.appends % STREAM_RETENTION.sweepEveryAppends === 0) await this.sweep(at);
    return last;
  }

  async head(stream: string): Promise<number> {
    this.assertOpen();
    return this.lastOffset(stream);
  }

  async read(stream: string, from: number, limit = 1000): Promise<AgentStreamEvent[]> {
    this.assertOpen();
    const cutoff = this.retention.clock() - this.retention.retentionMs;
    const rows = this.sql.read.all(stream, from, cutoff, limit) as Array<{ seq: number; at: number; event: string }>;
    return rows.map((row) => ({ ...(JSON.parse(row.event) as AgentStreamEventData), offset: row.seq, at: row.at }));
  }

  async waitFor(
    stream: string,
    from: number,
    options: { signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<void> {
    const until = Date.now() + (options.timeoutMs ?? 60_000);
    while (!this.closed && !options.signal?.aborted && Date.now() < until) {
      if (this.lastOffset(stream) >= from) return;
      await sleepOrAbort(Math.min(this.pollMs, Math.max(0, until - Date.now())), options.signal);
    }
  }

  async sweep(now: number = this.retention.clock()): Promise<number> {
    this.assertOpen();
    let total = 0;
    for (;;) {
      const { changes } = this.sql.sweep.run(now - this.retention.retentionMs);
      total += changes;
      if (changes < 1000) return total;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }

  private lastOffset(stream: string): number {
    if (this.closed) return 0;
    return (this.sql.head.get(stream) as { last_seq: number } | undefined)?.last_seq ?? 0;
  }

  private assertOpen(): void {
    if (this.closed) throw new StreamStoreError('The stream store is closed.', 'STORE_CLOSED');
  }
}
