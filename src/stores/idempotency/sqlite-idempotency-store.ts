import { randomUUID } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { preparePrivateStateFile } from '../private-state';
import { IDEMPOTENCY_DEFAULTS } from './idempotency-defaults';
import {
  acceptRepeatedFinish,
  checkBegin,
  checkDuration,
  checkKey,
  checkLookup,
  checkTakeOver,
  checkToken,
  decideBegin,
  decideLookup,
  finishRetention,
  insertedRecord,
  INSERTED_OWNER,
  retentionFrom,
  serializeFailure,
  serializeResult,
  startFresh,
  type BeginRequest,
  type IdempotencyRecord,
  type IdempotencyStoreBaseOptions,
  type RecordState,
} from './idempotency-record';
import type {
  BeginOptions,
  BeginOutcome,
  FinishOptions,
  IdempotencyStore,
  InsertOutcome,
  LookupOutcome,
  StoredFailure,
  TakeOverOptions,
} from './idempotency-store';
import { IdempotencyStoreError } from './idempotency-store-error';

/** Defaults specific to the SQLite store. */
export const SQLITE_STORE_DEFAULTS = {
  /** Total time one operation waits for the write lock held by other connections before giving up. */
  busyTimeoutMs: 5_000,
  /**
   * SQLite's own (blocking) busy wait per try. better-sqlite3 is synchronous, so a long busy_timeout would
   * freeze the event loop (and the worker's heartbeats); beyond this slice the store waits asynchronously.
   */
  lockWaitSliceMs: 20,
  /** FULL: a commit survives power loss too, so a stored result is never lost after the effect happened. */
  synchronous: 'FULL',
  /** Rows deleted per `reap` transaction, so that reaping never holds the write lock for long. */
  reapBatchSize: 1_000,
} as const;

/** Options of {@link SqliteIdempotencyStore}. */
export interface SqliteIdempotencyStoreOptions extends IdempotencyStoreBaseOptions {
  /**
   * Database file; its directory is created (0700). Default `.data/idempotency.sqlite` under the working
   * directory. The file and its -wal / -shm files are 0600 (docs/at-rest.md).
   */
  path?: string;
  /** Table name (letters, digits, `_`). Default `idempotency_keys`. */
  table?: string;
  /** See {@link SQLITE_STORE_DEFAULTS}. */
  busyTimeoutMs?: number;
  /** `FULL` (default) or `NORMAL` (WAL: durable against process crashes, not against power loss). */
  synchronous?: 'FULL' | 'NORMAL';
  /**
   * Group commit (default true): the writes that callers of this store make in the same turn of the event loop
   * (the claims and completions of concurrent runs on a worker) are committed together in one transaction, one
   * fsync for all of them, and each call resolves once that commit is done. Every write is still durable
   * before its promise resolves; a write that fails fails alone. False: one transaction per write.
   */
  groupCommit?: boolean;
  /**
   * With group commit and `synchronous=FULL` (the defaults), where a group's fsync runs (default true: off the
   * event loop). better-sqlite3 is synchronous, and a commit's fsync blocked the worker's only JavaScript thread
   * (its activities, its stores, the SDK's bridge to the workflow threads) for the disk's sync time, ~5 ms a
   * group on the machine of `npm run bench:scale`. Instead the group commits as `synchronous=NORMAL` does (no
   * fsync) and then `fdatasync`s the WAL file on libuv's thread pool, which is what `FULL` adds in WAL mode; each
   * write of the group resolves only once that sync is done, so it is as durable as before when it resolves.
   * False: SQLite syncs inside the commit, on the event loop.
   */
  syncOffEventLoop?: boolean;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

interface Row {
  key: string;
  fingerprint: string;
  state: RecordState;
  token: string;
  owner: string;
  previous_owner: string | null;
  lease_expires_at: number | null;
  result_json: string | null;
  error_json: string | null;
  takeovers: number;
  created_at: number;
  updated_at: number;
  expires_at: number;
}

type Ownership = Pick<Row, 'state' | 'token' | 'owner'>;

/** Arguments of one `insertIfAbsent`, checked. */
interface Insert {
  key: string;
  fingerprint: string;
  json: string | null;
  retention: number;
  now: number;
}

/**
 * The embedded {@link IdempotencyStore}: one table in a SQLite file (better-sqlite3), safe for several
 * processes and connections on the same file.
 *
 * - WAL mode, so readers never block the writer; `synchronous=FULL` by default.
 * - `begin` of a key with no record is one autocommit `INSERT … ON CONFLICT (key) DO NOTHING`: of any number
 *   of connections inserting one key exactly one inserts. A key that has a record is read and written inside
 *   `BEGIN IMMEDIATE`, which takes the database's write lock before reading: two connections can never both
 *   see an expired record and both claim it.
 * - Other writes are single conditional statements (`UPDATE … WHERE key = ? AND token = ? AND
 *   state = 'in_progress'`): the token fences a holder that lost the key.
 * - Lock waits: SQLite's blocking busy handler waits at most a short slice; then the operation is retried
 *   asynchronously (jittered) until `busyTimeoutMs`, after which it fails with `STORE_UNAVAILABLE`.
 *
 * @example
 * ```ts
 * const store = new SqliteIdempotencyStore({ path: '.data/idempotency.sqlite' });
 * ```
 */
export class SqliteIdempotencyStore implements IdempotencyStore {
  /** Absolute path of the database file (or `:memory:`). */
  readonly path: string;
  private readonly db: Database.Database;
  /**
   * The connection's own `synchronous` mode, restored after a write made durable with the next commit: `NORMAL`
   * when the store syncs the WAL itself (the connection never fsyncs in a commit then), else the option's.
   */
  private readonly synchronous: 'FULL' | 'NORMAL';
  private readonly groupCommit: boolean;
  /** The WAL file a durable group syncs itself ({@link SqliteIdempotencyStoreOptions.syncOffEventLoop}), if it does. */
  private readonly walPath: string | undefined;
  private wal: Promise<FileHandle> | undefined;
  /** The WAL sync running, and the one queued after it (shared by the groups that commit meanwhile). */
  private walSyncing: Promise<void> | undefined;
  private walSyncQueued: Promise<void> | undefined;
  /** Writes waiting for the next group commit ({@link SqliteIdempotencyStoreOptions.groupCommit}). */
  private queued: QueuedWrite[] = [];
  private flushScheduled = false;
  private readonly commitGroup: (writes: readonly QueuedWrite[]) => WriteOutcome[];
  private readonly retentionMs: number;
  private readonly busyTimeoutMs: number;
  private readonly clock: () => number;
  private readonly beginTransaction: (request: BeginRequest, now: number) => BeginOutcome;
  private readonly insertTransaction: (insert: Insert) => InsertOutcome;
  private readonly statements: {
    select: Database.Statement<[string], Row>;
    ownership: Database.Statement<[string, number], Ownership>;
    upsert: Database.Statement<[Row]>;
    insertNew: Database.Statement<[string, string, string, string, number, number, number, number]>;
    insertCompleted: Database.Statement<[string, string, string, string, string | null, number, number, number]>;
    heartbeat: Database.Statement<[{ key: string; token: string; now: number; lease: number; retention: number }]>;
    finish: Database.Statement<[RecordState, string | null, string | null, number, number, string, string, number]>;
    release: Database.Statement<[string, string, number]>;
    reap: Database.Statement<[number, number, number]>;
  };

  constructor(options: SqliteIdempotencyStoreOptions = {}) {
    const table = options.table ?? IDEMPOTENCY_DEFAULTS.table;
    if (!IDENTIFIER.test(table)) {
      throw new IdempotencyStoreError(`Invalid SQLite table name "${table}".`, 'INVALID_CONFIG');
    }
    const synchronous = options.synchronous ?? SQLITE_STORE_DEFAULTS.synchronous;
    this.synchronous = synchronous;
    this.groupCommit = options.groupCommit ?? true;
    if (synchronous !== 'FULL' && synchronous !== 'NORMAL') {
      throw new IdempotencyStoreError(`Invalid SQLite synchronous mode "${String(synchronous)}".`, 'INVALID_CONFIG');
    }
    this.retentionMs = retentionFrom(options);
    this.busyTimeoutMs = checkDuration(options.busyTimeoutMs ?? SQLITE_STORE_DEFAULTS.busyTimeoutMs, 'busyTimeoutMs');
    this.clock = options.clock ?? Date.now;
    const file = options.path ?? IDEMPOTENCY_DEFAULTS.sqlitePath;
    this.path = file === ':memory:' ? file : resolve(file);

    try {
      // 0600 before SQLite opens it (its -wal and -shm files take that mode), in a 0700 directory when created.
      preparePrivateStateFile(this.path);
      this.db = new Database(this.path, { timeout: this.busyTimeoutMs });
      // Set-up may race with other processes opening the same file: wait the full timeout here.
      this.db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
      const journal = this.db.pragma('journal_mode = WAL', { simple: true });
      this.db.pragma(`synchronous = ${synchronous}`);
      const syncsWal =
        this.groupCommit && synchronous === 'FULL' && options.syncOffEventLoop !== false && journal === 'wal';
      this.walPath = syncsWal && this.path !== ':memory:' ? `${this.path}-wal` : undefined;
      // The store's durable groups fsync the WAL themselves: the connection commits without SQLite's fsync for
      // good, instead of switching `synchronous` twice around every group (two statements per commit).
      if (this.walPath !== undefined) {
        this.db.pragma('synchronous = NORMAL');
        this.synchronous = 'NORMAL';
      }
      this.db.exec(`
        CREATE TABLE IF NOT EXISTS ${table} (
          key TEXT PRIMARY KEY NOT NULL,
          fingerprint TEXT NOT NULL,
          state TEXT NOT NULL CHECK (state IN ('in_progress', 'completed', 'failed')),
          token TEXT NOT NULL,
          owner TEXT NOT NULL,
          previous_owner TEXT,
          lease_expires_at INTEGER,
          result_json TEXT,
          error_json TEXT,
          takeovers INTEGER NOT NULL DEFAULT 0,
          created_at INTEGER NOT NULL,
          updated_at INTEGER NOT NULL,
          expires_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS ${table}_expires_at ON ${table} (expires_at);
      `);
      this.db.pragma(`busy_timeout = ${SQLITE_STORE_DEFAULTS.lockWaitSliceMs}`);
    } catch (error) {
      throw new IdempotencyStoreError(
        `Cannot open the SQLite idempotency store at ${this.path}.`,
        'STORE_UNAVAILABLE',
        {
          cause: error,
        },
      );
    }

    this.statements = {
      select: this.db.prepare(`SELECT * FROM ${table} WHERE key = ?`),
      ownership: this.db.prepare(`SELECT state, token, owner FROM ${table} WHERE key = ? AND expires_at > ?`),
      upsert: this.db.prepare(`
        INSERT OR REPLACE INTO ${table} (key, fingerprint, state, token, owner, previous_owner, lease_expires_at,
          result_json, error_json, takeovers, created_at, updated_at, expires_at)
        VALUES (@key, @fingerprint, @state, @token, @owner, @previous_owner, @lease_expires_at,
          @result_json, @error_json, @takeovers, @created_at, @updated_at, @expires_at)`),
      // The common case of begin in one autocommit statement: a key with no record at all.
      insertNew: this.db.prepare(`
        INSERT INTO ${table} (key, fingerprint, state, token, owner, lease_expires_at, takeovers, created_at,
          updated_at, expires_at)
        VALUES (?, ?, 'in_progress', ?, ?, ?, 0, ?, ?, ?)
        ON CONFLICT (key) DO NOTHING`),
      // insertIfAbsent of a key with no record at all: one autocommit statement.
      insertCompleted: this.db.prepare(`
        INSERT INTO ${table} (key, fingerprint, state, token, owner, result_json, takeovers, created_at,
          updated_at, expires_at)
        VALUES (?, ?, 'completed', ?, ?, ?, 0, ?, ?, ?)
        ON CONFLICT (key) DO NOTHING`),
      heartbeat: this.db.prepare(`
        UPDATE ${table}
        SET lease_expires_at = @now + @lease, updated_at = @now, expires_at = @now + @lease + @retention
        WHERE key = @key AND token = @token AND state = 'in_progress' AND expires_at > @now`),
      // ?1 state, ?2 result, ?3 error, ?4 now, ?5 expires, ?6 key, ?7 token, ?8 now (positional: no object per call)
      finish: this.db.prepare(`
        UPDATE ${table}
        SET state = ?, result_json = ?, error_json = ?, lease_expires_at = NULL, updated_at = ?, expires_at = ?
        WHERE key = ? AND token = ? AND state = 'in_progress' AND expires_at > ?`),
      release: this.db.prepare(
        `DELETE FROM ${table} WHERE key = ? AND token = ? AND state = 'in_progress' AND expires_at > ?`,
      ),
      reap: this.db.prepare(
        `DELETE FROM ${table} WHERE key IN (SELECT key FROM ${table} WHERE expires_at <= ? LIMIT ?) AND expires_at <= ?`,
      ),
    };

    const decide = (request: BeginRequest, now: number): BeginOutcome => {
      const row = this.statements.select.get(request.key);
      const decision = decideBegin(row && fromRow(row), request, now, this.retentionMs);
      if (decision.write) this.statements.upsert.run(toRow(decision.write));
      return decision.outcome;
    };
    const transaction = this.db.transaction(decide);
    this.beginTransaction = (request, now) => transaction.immediate(request, now);
    const insertIntoExisting = this.db.transaction((insert: Insert): InsertOutcome => {
      const row = this.statements.select.get(insert.key);
      const existing = row && fromRow(row);
      const found = decideLookup(existing, insert.fingerprint, insert.now);
      if (found.state !== 'absent') return found;
      const record = insertedRecord(
        insert.key,
        insert.fingerprint,
        insert.json,
        insert.now,
        insert.retention,
        existing,
      );
      this.statements.upsert.run(toRow(record));
      return { state: 'inserted' };
    });
    this.insertTransaction = (insert) => insertIntoExisting.immediate(insert);
    // One BEGIN IMMEDIATE … COMMIT for a group of writes; the nested transactions of begin and insertIfAbsent
    // become savepoints inside it. A write that throws fails alone: its statements wrote nothing (each write is
    // one statement, or a nested transaction that rolls back).
    const group = this.db.transaction((writes: readonly QueuedWrite[]): WriteOutcome[] =>
      writes.map((write) => {
        try {
          return { ok: true, value: write.run() };
        } catch (error) {
          return { ok: false, error };
        }
      }),
    );
    this.commitGroup = (writes) => group.immediate(writes);
  }

  /** {@inheritDoc IdempotencyStore.lookup} */
  async lookup(key: string, fingerprint: string): Promise<LookupOutcome> {
    const request = checkLookup(key, fingerprint);
    // A read in WAL mode takes no write lock and commits nothing.
    return this.withLock(() => {
      const row = this.statements.select.get(request.key);
      return decideLookup(row && fromRow(row), request.fingerprint, this.clock());
    });
  }

  /**
   * {@inheritDoc IdempotencyStore.insertIfAbsent}
   *
   * A key with no record is one autocommit `INSERT … ON CONFLICT (key) DO NOTHING` (one commit); a key with a
   * record is read and, when it counts as absent, replaced inside `BEGIN IMMEDIATE`.
   */
  async insertIfAbsent(
    key: string,
    fingerprint: string,
    result: unknown,
    options?: FinishOptions,
  ): Promise<InsertOutcome> {
    const request = checkLookup(key, fingerprint);
    const retention = finishRetention(options, this.retentionMs);
    const json = serializeResult(result);
    return this.write(() => {
      const insert: Insert = { ...request, json, retention, now: this.clock() };
      const { now } = insert;
      const inserted = this.statements.insertCompleted.run(
        insert.key,
        insert.fingerprint,
        randomUUID(),
        INSERTED_OWNER,
        json,
        now,
        now,
        now + retention,
      );
      return inserted.changes === 1 ? ({ state: 'inserted' } as const) : this.insertTransaction(insert);
    }, options?.durableWithNextCommit === true);
  }

  /** {@inheritDoc IdempotencyStore.begin} */
  async begin(key: string, fingerprint: string, options: BeginOptions): Promise<BeginOutcome> {
    const request = checkBegin(key, fingerprint, options);
    // The clock is read inside the retry, so a long lock wait does not shorten the new lease.
    return this.write(() => this.beginAt(request, this.clock()));
  }

  /** {@inheritDoc IdempotencyStore.takeOverDeadHolder} */
  async takeOverDeadHolder(key: string, fingerprint: string, options: TakeOverOptions): Promise<BeginOutcome> {
    const request = checkTakeOver(key, fingerprint, options);
    // The same immediate transaction as begin: the record is read and claimed under SQLite's write lock.
    return this.write(() => this.beginAt(request, this.clock()));
  }

  /**
   * One autocommit `INSERT … ON CONFLICT DO NOTHING` claims a key that has no record (the common case: one
   * statement, no read); a key with a record, live or not, goes through the read-and-decide transaction.
   */
  private beginAt(request: BeginRequest, now: number): BeginOutcome {
    const { outcome, write } = startFresh(request, now, this.retentionMs);
    const { key, fingerprint, token, owner, expiresAt } = write;
    const inserted = this.statements.insertNew.run(
      key,
      fingerprint,
      token,
      owner,
      outcome.leaseExpiresAt,
      now,
      now,
      expiresAt,
    );
    return inserted.changes === 1 ? outcome : this.beginTransaction(request, now);
  }

  /** {@inheritDoc IdempotencyStore.heartbeat} */
  async heartbeat(key: string, token: string, leaseMs: number = IDEMPOTENCY_DEFAULTS.leaseMs): Promise<boolean> {
    const params = {
      key: checkKey(key),
      token: checkToken(token),
      lease: checkDuration(leaseMs, 'leaseMs'),
      retention: this.retentionMs,
    };
    return this.write(() => this.statements.heartbeat.run({ ...params, now: this.clock() }).changes === 1);
  }

  /** {@inheritDoc IdempotencyStore.complete} */
  async complete(key: string, token: string, result: unknown, options?: FinishOptions): Promise<void> {
    const retention = finishRetention(options, this.retentionMs);
    const deferSync = options?.durableWithNextCommit === true;
    await this.finish(
      checkKey(key),
      checkToken(token),
      'completed',
      serializeResult(result),
      null,
      retention,
      deferSync,
    );
  }

  /** {@inheritDoc IdempotencyStore.fail} */
  async fail(key: string, token: string, error: StoredFailure, options?: FinishOptions): Promise<void> {
    const retention = finishRetention(options, this.retentionMs);
    await this.finish(checkKey(key), checkToken(token), 'failed', null, serializeFailure(error), retention);
  }

  /** {@inheritDoc IdempotencyStore.release} */
  async release(key: string, token: string): Promise<boolean> {
    const [k, t] = [checkKey(key), checkToken(token)];
    return this.write(() => this.statements.release.run(k, t, this.clock()).changes === 1);
  }

  /** {@inheritDoc IdempotencyStore.reap} */
  async reap(now?: number): Promise<number> {
    const at = now ?? this.clock();
    const batch = SQLITE_STORE_DEFAULTS.reapBatchSize;
    let total = 0;
    for (;;) {
      const deleted = await this.withLock(() => this.statements.reap.run(at, batch, at).changes);
      total += deleted;
      if (deleted < batch) return total;
      await sleep(0); // let other connections take the lock between batches
    }
  }

  /** {@inheritDoc IdempotencyStore.close} */
  async close(): Promise<void> {
    // Writes already asked for are committed (or fail) first.
    if (this.queued.length > 0) await this.flush();
    if (this.db.open) this.db.close();
    const wal = this.wal;
    this.wal = undefined;
    await wal?.then((handle) => handle.close()).catch(() => undefined);
  }

  private async finish(
    key: string,
    token: string,
    state: 'completed' | 'failed',
    result: string | null,
    error: string | null,
    retentionMs: number,
    deferSync = false,
  ): Promise<void> {
    const current = await this.write(() => {
      const now = this.clock();
      const expires = now + retentionMs;
      if (this.statements.finish.run(state, result, error, now, expires, key, token, now).changes === 1) return null;
      return this.statements.ownership.get(key, now);
    }, deferSync);
    if (current !== null) acceptRepeatedFinish(key, current, token, state);
  }

  /**
   * Runs a write: with group commit, in the next group (committed at the end of this turn of the event loop,
   * with the writes other callers make meanwhile); else in a transaction of its own. `deferSync`: the write
   * may become durable with the next synced commit (`durableWithNextCommit`): a group of only such writes
   * commits without an fsync.
   */
  private write<T>(operation: () => T, deferSync = false): Promise<T> {
    if (!this.groupCommit) return this.withLock(() => this.withSync(deferSync, operation));
    return new Promise<T>((resolve, reject) => {
      this.queued.push({ run: operation, deferSync, resolve: resolve as (value: unknown) => void, reject });
      if (this.flushScheduled) return;
      this.flushScheduled = true;
      setImmediate(() => {
        this.flush().catch(() => undefined);
      });
    });
  }

  /** Commits the queued writes as one group and settles each caller's promise. */
  private async flush(): Promise<void> {
    this.flushScheduled = false;
    const writes = this.queued;
    this.queued = [];
    if (writes.length === 0) return;
    const deferSync = writes.every((write) => write.deferSync);
    // A group that must be durable commits without SQLite's fsync when the store syncs the WAL itself (below).
    const syncWal = !deferSync && this.walPath !== undefined;
    let outcomes: WriteOutcome[];
    try {
      outcomes = await this.withLock(() => this.withSync(deferSync || syncWal, () => this.commitGroup(writes)));
    } catch (error) {
      for (const write of writes) write.reject(error);
      return;
    }
    if (syncWal) {
      try {
        await this.syncWal();
      } catch (error) {
        const failure = this.storeFailure(error);
        for (const write of writes) write.reject(failure);
        return;
      }
    }
    outcomes.forEach((outcome, i) => {
      if (outcome.ok) writes[i]!.resolve(outcome.value);
      else writes[i]!.reject(this.storeFailure(outcome.error));
    });
  }

  /**
   * Resolves once an `fdatasync` of the WAL file that began after this call has completed, so it covers every
   * commit made before the call (what `synchronous=FULL` does inside each commit in WAL mode). Runs on libuv's
   * thread pool; the calls made while one runs share the next one.
   */
  private syncWal(): Promise<void> {
    if (this.walSyncing) {
      this.walSyncQueued ??= this.walSyncing
        .catch(() => undefined)
        .then(() => {
          this.walSyncQueued = undefined;
          return this.syncWal();
        });
      return this.walSyncQueued;
    }
    const run = async (): Promise<void> => {
      // Read and write: a sync through a read-only handle is refused on some platforms (Windows).
      this.wal ??= open(this.walPath!, 'r+');
      try {
        await (await this.wal).datasync();
      } catch (error) {
        this.wal = undefined; // opened again by the next sync
        throw error;
      }
    };
    this.walSyncing = run().finally(() => {
      this.walSyncing = undefined;
    });
    return this.walSyncing;
  }

  /** Runs `operation` with `synchronous=NORMAL` when `deferSync` and the store is `FULL`; then `FULL` again. */
  private withSync<T>(deferSync: boolean, operation: () => T): T {
    // better-sqlite3 is synchronous: no other statement of this connection runs between the two pragmas.
    const lower = deferSync && this.synchronous === 'FULL';
    if (lower) this.db.pragma('synchronous = NORMAL');
    try {
      return operation();
    } finally {
      if (lower) this.db.pragma(`synchronous = ${this.synchronous}`);
    }
  }

  /** An error of a store operation as the store reports it: its own errors as they are, others STORE_UNAVAILABLE. */
  private storeFailure(error: unknown): IdempotencyStoreError {
    if (error instanceof IdempotencyStoreError) return error;
    return new IdempotencyStoreError(
      `The SQLite idempotency store failed: ${(error as Error).message}`,
      'STORE_UNAVAILABLE',
      {
        cause: error,
      },
    );
  }

  /** Runs `operation`, retrying while another connection holds the write lock, up to `busyTimeoutMs`. */
  private async withLock<T>(operation: () => T): Promise<T> {
    const deadline = Date.now() + this.busyTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      if (!this.db.open) throw new IdempotencyStoreError('The idempotency store is closed.', 'STORE_CLOSED');
      try {
        return operation();
      } catch (error) {
        if (error instanceof IdempotencyStoreError) throw error;
        const code = (error as { code?: unknown }).code;
        const busy = typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
        if (!busy || Date.now() >= deadline) {
          throw new IdempotencyStoreError(
            busy
              ? `The SQLite idempotency store stayed locked for ${this.busyTimeoutMs} ms.`
              : `The SQLite idempotency store failed: ${(error as Error).message}`,
            'STORE_UNAVAILABLE',
            { cause: error },
          );
        }
        await sleep(Math.random() * Math.min(50, 2 ** attempt));
      }
    }
  }
}

/** A write waiting for its group commit, and how to settle its caller. */
interface QueuedWrite {
  run: () => unknown;
  deferSync: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** What one write of a group did. */
type WriteOutcome = { ok: true; value: unknown } | { ok: false; error: unknown };

function fromRow(row: Row): IdempotencyRecord {
  return {
    key: row.key,
    fingerprint: row.fingerprint,
    state: row.state,
    token: row.token,
    owner: row.owner,
    previousOwner: row.previous_owner,
    leaseExpiresAt: row.lease_expires_at,
    resultJson: row.result_json,
    errorJson: row.error_json,
    takeovers: row.takeovers,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    expiresAt: row.expires_at,
  };
}

function toRow(record: IdempotencyRecord): Row {
  return {
    key: record.key,
    fingerprint: record.fingerprint,
    state: record.state,
    token: record.token,
    owner: record.owner,
    previous_owner: record.previousOwner,
    lease_expires_at: record.leaseExpiresAt,
    result_json: record.resultJson,
    error_json: record.errorJson,
    takeovers: record.takeovers,
    created_at: record.createdAt,
    updated_at: record.updatedAt,
    expires_at: record.expiresAt,
  };
}
