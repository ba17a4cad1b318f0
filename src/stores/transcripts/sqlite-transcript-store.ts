import Database from 'better-sqlite3';
import { preparePrivateStateFile } from '../private-state';
import type { TranscriptMessage } from '../../contract/model-types';
import type { StoredPayload, TranscriptStore } from './transcript-store';
import {
  expiryOf,
  PAYLOAD_RETENTION,
  payloadRetention,
  type PayloadRetention,
  type PayloadRetentionOptions,
} from './payload-retention';

/** Defaults of the SQLite transcript store. */
export const SQLITE_TRANSCRIPT_DEFAULTS = {
  path: '.data/transcripts.sqlite',
  busyTimeoutMs: 5000,
} as const;

/**
 * A transcript store in a SQLite file: survives worker restarts on one machine, and is shared by the
 * worker processes of that machine. Workers on several machines need a shared store of their own. The file
 * and its -wal / -shm files are 0600, a directory it creates 0700 (docs/at-rest.md).
 */
export class SqliteTranscriptStore implements TranscriptStore {
  private readonly db: Database.Database;
  private readonly retention: PayloadRetention;
  /** Statements and the write's transaction, prepared once: a model turn writes and reads a transcript each. */
  private readonly sql: {
    apply: Database.Transaction<(runKey: string, fromIndex: number, messages: readonly TranscriptMessage[]) => boolean>;
    read: Database.Statement<[string], { message: string }>;
    putPayload: Database.Statement<[string, string, string, number]>;
    getPayload: Database.Statement<[string, number], { run_id: string; text: string; expires_at: number }>;
    reapBatch: Database.Statement<[number, number]>;
    delete: Database.Statement<[string]>;
  };

  /** @throws {@link TranscriptStoreError} `INVALID_CONFIG` for a retention that is not a positive number. */
  constructor(options: { path?: string } & PayloadRetentionOptions = {}) {
    this.retention = payloadRetention(options);
    const path = options.path ?? SQLITE_TRANSCRIPT_DEFAULTS.path;
    // 0600 before SQLite opens it (its -wal and -shm files take that mode), in a 0700 directory when created.
    preparePrivateStateFile(path);
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`busy_timeout = ${SQLITE_TRANSCRIPT_DEFAULTS.busyTimeoutMs}`);
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS transcript_messages (run_key TEXT NOT NULL, seq INTEGER NOT NULL, message TEXT NOT NULL, PRIMARY KEY (run_key, seq))',
    );
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS stored_payloads (handle TEXT PRIMARY KEY, run_id TEXT NOT NULL, text TEXT NOT NULL, expires_at INTEGER)',
    );
    this.addExpiryColumn();
    const count = this.db.prepare<[string], { n: number }>(
      'SELECT COUNT(*) AS n FROM transcript_messages WHERE run_key = ?',
    );
    const remove = this.db.prepare('DELETE FROM transcript_messages WHERE run_key = ? AND seq >= ?');
    const insert = this.db.prepare('INSERT INTO transcript_messages (run_key, seq, message) VALUES (?, ?, ?)');
    this.sql = {
      apply: this.db.transaction((runKey: string, fromIndex: number, messages: readonly TranscriptMessage[]) => {
        const stored = count.get(runKey)!.n;
        if (stored < fromIndex) return false;
        remove.run(runKey, fromIndex);
        messages.forEach((message, i) => insert.run(runKey, fromIndex + i, JSON.stringify(message)));
        return true;
      }),
      read: this.db.prepare('SELECT message FROM transcript_messages WHERE run_key = ? ORDER BY seq'),
      putPayload: this.db.prepare(
        'INSERT INTO stored_payloads (handle, run_id, text, expires_at) VALUES (?, ?, ?, ?) ON CONFLICT (handle) DO UPDATE SET run_id = excluded.run_id, text = excluded.text, expires_at = excluded.expires_at',
      ),
      getPayload: this.db.prepare(
        'SELECT run_id, text, expires_at FROM stored_payloads WHERE handle = ? AND expires_at > ?',
      ),
      reapBatch: this.db.prepare(
        'DELETE FROM stored_payloads WHERE rowid IN (SELECT rowid FROM stored_payloads WHERE expires_at <= ? LIMIT ?)',
      ),
      delete: this.db.prepare('DELETE FROM transcript_messages WHERE run_key = ?'),
    };
  }

  /** Tables created before payloads expired get the column, and their payloads the default retention from now. */
  private addExpiryColumn(): void {
    const columns = this.db.prepare('PRAGMA table_info(stored_payloads)').all() as Array<{ name: string }>;
    this.db
      .transaction(() => {
        if (!columns.some((column) => column.name === 'expires_at')) {
          this.db.exec('ALTER TABLE stored_payloads ADD COLUMN expires_at INTEGER');
        }
        this.db
          .prepare('UPDATE stored_payloads SET expires_at = ? WHERE expires_at IS NULL')
          .run(this.retention.clock() + this.retention.retentionMs);
      })
      .immediate();
    this.db.exec('CREATE INDEX IF NOT EXISTS stored_payloads_expires_at ON stored_payloads (expires_at)');
  }

  async write(runKey: string, fromIndex: number, messages: readonly TranscriptMessage[]): Promise<boolean> {
    return this.sql.apply.immediate(runKey, fromIndex, messages);
  }

  async read(runKey: string): Promise<TranscriptMessage[] | undefined> {
    const rows = this.sql.read.all(runKey);
    return rows.length === 0 ? undefined : rows.map((row) => JSON.parse(row.message) as TranscriptMessage);
  }

  async putPayload(handle: string, payload: StoredPayload): Promise<void> {
    const expiresAt = expiryOf(payload, this.retention);
    this.sql.putPayload.run(handle, payload.runId, payload.text, expiresAt);
  }

  async getPayload(handle: string): Promise<StoredPayload | undefined> {
    const row = this.sql.getPayload.get(handle, this.retention.clock());
    return row ? { runId: row.run_id, text: row.text, expiresAt: row.expires_at } : undefined;
  }

  async reapPayloads(now: number = this.retention.clock()): Promise<number> {
    let total = 0;
    for (;;) {
      const { changes } = this.sql.reapBatch.run(now, PAYLOAD_RETENTION.reapBatchSize);
      total += changes;
      if (changes < PAYLOAD_RETENTION.reapBatchSize) return total;
    }
  }

  async delete(runKey: string): Promise<void> {
    this.sql.delete.run(runKey);
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
