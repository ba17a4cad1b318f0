import { createHash, randomUUID } from 'node:crypto';
import { Pool, type PoolConfig, type QueryResult } from 'pg';
import { createTablesSerialized, POSTGRES_IDENTIFIER } from '../create-tables';
import { IDEMPOTENCY_DEFAULTS, IDEMPOTENCY_ENV } from './idempotency-defaults';
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
  INSERTED_OWNER,
  retentionFrom,
  startFresh,
  serializeFailure,
  serializeResult,
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

/** Defaults specific to the Postgres store. */
export const POSTGRES_STORE_DEFAULTS = {
  /** Connections of the pool the store creates. */
  poolSize: 10,
  /** How long to wait for a connection before failing with `STORE_UNAVAILABLE` (pg's own default waits forever). */
  connectionTimeoutMs: 5_000,
  /** Read-and-claim rounds of one `begin` before it gives up with `STORE_UNAVAILABLE` (each lost round = a race). */
  beginRounds: 16,
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
  /**
   * How long a call waits for a connection of the pool the store creates (opening one, or a free one when all are
   * busy) before failing with the retryable `STORE_UNAVAILABLE`. Default 5 s; raise it for many concurrent callers.
   */
  connectionTimeoutMs?: number;
  /** Table name (letters, digits, `_`, at most 48). Default `idempotency_keys`. */
  table?: string;
  /** Schema of the table, created if missing. Default: the connection's search path (usually `public`). */
  schema?: string;
  /** Create the schema and table when missing (default true). Turn off where the role may not run DDL. */
  createTable?: boolean;
}

/** A row as `begin` reads it. Bigints arrive as strings; JSON as text (`::text`), so SQL NULL and `null` differ. */
interface Row {
  now: string;
  key: string;
  fingerprint: string;
  state: RecordState;
  token: string;
  owner: string;
  previous_owner: string | null;
  lease_expires_at: string | null;
  result_json: string | null;
  error_json: string | null;
  takeovers: number;
  created_at: string;
  updated_at: string;
  expires_at: string;
}

/**
 * The {@link IdempotencyStore} for more than one machine: one Postgres table, reached through a `pg` pool.
 *
 * `begin` never takes a lock or writes unless it claims the key. Each round:
 * 1. `INSERT … ON CONFLICT (key) DO NOTHING RETURNING …`: for a new key (the common case: all of `begin`) the
 *    unique index lets exactly one of any number of concurrent inserters win; the others wait for its commit
 *    and insert nothing (no write, no fsync);
 * 2. a key with a record: `SELECT` it (a fresh snapshot, so it sees a winner that just committed), and the
 *    same state machine as the other stores decides: conflict, replay and in-flight answers need nothing
 *    more; a record past retention or with an expired lease is claimed with a compare-and-set
 *    `UPDATE … WHERE key = $1 AND token = <token read> AND <the condition again, at now>` (its row count says
 *    whether it won), which a concurrent claimer, heartbeat or completion defeats;
 * 3. no record any more (released or reaped in between) or a lost compare-and-set: next round.
 * Writes that need ownership are `UPDATE … WHERE key = $1 AND token = $2 AND state = 'in_progress'`; writes
 * send no rows back, their row count is the answer.
 * Losers of a race never lock the row, so 64 concurrent begins of one key cost one write and one fsync.
 *
 * Leases run on the DATABASE's clock: every statement reads `statement_timestamp()` (one value for the whole
 * statement), so workers whose clocks differ by minutes still agree on who owns a key (the `clock` option
 * replaces it only in tests). Results are stored as `json` (text kept verbatim), so a replay has the key order
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
  private readonly clock: (() => number) | undefined;
  private readonly sql: ReturnType<typeof statements>;
  private readonly statementPrefix: string;
  private ready: Promise<void> | undefined;
  private closed = false;

  constructor(options: PostgresIdempotencyStoreOptions = {}) {
    const table = options.table ?? IDEMPOTENCY_DEFAULTS.table;
    const schema = options.schema;
    for (const name of schema === undefined ? [table] : [table, schema]) {
      if (!POSTGRES_IDENTIFIER.test(name)) {
        throw new IdempotencyStoreError(`Invalid Postgres identifier "${name}".`, 'INVALID_CONFIG');
      }
    }
    this.retentionMs = retentionFrom(options);
    this.clock = options.clock;
    this.tableName = schema === undefined ? `"${table}"` : `"${schema}"."${table}"`;
    this.sql = statements(this.tableName, table, schema);
    this.statementPrefix = `idem_${createHash('sha256').update(this.tableName).digest('hex').slice(0, 16)}`;
    if (options.pool) {
      this.pool = options.pool;
      this.ownsPool = false;
    } else {
      const config: PoolConfig = {
        connectionString:
          options.connectionString ?? process.env[IDEMPOTENCY_ENV.postgresUrl] ?? IDEMPOTENCY_DEFAULTS.postgresUrl,
        max: checkDuration(options.poolSize ?? POSTGRES_STORE_DEFAULTS.poolSize, 'poolSize'),
        connectionTimeoutMillis: checkDuration(
          options.connectionTimeoutMs ?? POSTGRES_STORE_DEFAULTS.connectionTimeoutMs,
          'connectionTimeoutMs',
        ),
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
    return this.claimRounds(checkBegin(key, fingerprint, options));
  }

  /**
   * {@inheritDoc IdempotencyStore.takeOverDeadHolder}
   *
   * The claim is `begin`'s compare-and-set `UPDATE`, on the token read and on the owner still being the dead
   * one: a concurrent taker that won first changed both, so this one's row count is 0 and its next round reads
   * the winner's record.
   */
  async takeOverDeadHolder(key: string, fingerprint: string, options: TakeOverOptions): Promise<BeginOutcome> {
    return this.claimRounds(checkTakeOver(key, fingerprint, options));
  }

  private async claimRounds(request: BeginRequest): Promise<BeginOutcome> {
    for (let round = 0; round < POSTGRES_STORE_DEFAULTS.beginRounds; round++) {
      // A new key: one INSERT claims it, its lease computed by the database from its own clock.
      const token = randomUUID();
      const [inserted] = await this.query<{ now: string }>('insertNew', () => [
        request.key,
        request.fingerprint,
        token,
        request.owner,
        request.leaseMs,
        this.retentionMs,
        this.testClock(),
      ]);
      if (inserted !== undefined) return startFresh(request, Number(inserted.now), this.retentionMs, token).outcome;
      // The key has a record (committed: a concurrent inserter's INSERT waited for it): read it, unlocked.
      const [row] = await this.query<Row>('select', () => [request.key, this.testClock()]);
      if (row === undefined) continue; // released or reaped in between: try to insert again
      const now = Number(row.now);
      const existing = fromRow(row);
      const { outcome, write } = decideBegin(existing, request, now, this.retentionMs);
      if (write === undefined) return outcome;
      const statement =
        existing.expiresAt <= now
          ? 'claimFresh'
          : outcome.state === 'outcome_unknown' && outcome.previousHolderDead
            ? 'claimDeadHolder'
            : 'claimTakeover';
      const claimed = await this.count(statement, () => [
        write.key,
        existing.token,
        now,
        write.fingerprint,
        write.token,
        write.owner,
        write.previousOwner,
        write.leaseExpiresAt,
        write.takeovers,
        write.createdAt,
        write.expiresAt,
        request.takeoverGraceMs,
      ]);
      if (claimed === 1) return outcome;
    }
    throw new IdempotencyStoreError(
      `Idempotency key "${request.key}" changed under every one of ${POSTGRES_STORE_DEFAULTS.beginRounds} attempts to claim it.`,
      'STORE_UNAVAILABLE',
    );
  }

  /** {@inheritDoc IdempotencyStore.lookup} */
  async lookup(key: string, fingerprint: string): Promise<LookupOutcome> {
    const request = checkLookup(key, fingerprint);
    const [row] = await this.query<Row>('select', () => [request.key, this.testClock()]);
    return row === undefined ? { state: 'absent' } : decideLookup(fromRow(row), request.fingerprint, Number(row.now));
  }

  /**
   * {@inheritDoc IdempotencyStore.insertIfAbsent}
   *
   * A key with no record is one `INSERT … ON CONFLICT (key) DO NOTHING` (one commit; concurrent inserters wait
   * for the winner's commit and write nothing); a key with a record is read, unlocked, and when it counts as
   * absent replaced with a compare-and-set `UPDATE` on the token read, like `begin`'s claims.
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
    for (let round = 0; round < POSTGRES_STORE_DEFAULTS.beginRounds; round++) {
      const [inserted] = await this.query<{ now: string }>('insertCompleted', () => [
        request.key,
        request.fingerprint,
        randomUUID(),
        INSERTED_OWNER,
        json,
        retention,
        this.testClock(),
      ]);
      if (inserted !== undefined) return { state: 'inserted' };
      const [row] = await this.query<Row>('select', () => [request.key, this.testClock()]);
      if (row === undefined) continue; // released or reaped in between: insert again
      const now = Number(row.now);
      const existing = fromRow(row);
      const found = decideLookup(existing, request.fingerprint, now);
      if (found.state !== 'absent') return found;
      const replaced = await this.count('replaceWithCompleted', () => [
        request.key,
        existing.token,
        now,
        request.fingerprint,
        randomUUID(),
        INSERTED_OWNER,
        existing.expiresAt > now ? existing.owner : null,
        json,
        retention,
      ]);
      if (replaced === 1) return { state: 'inserted' };
    }
    throw new IdempotencyStoreError(
      `Idempotency key "${request.key}" changed under every one of ${POSTGRES_STORE_DEFAULTS.beginRounds} attempts to insert it.`,
      'STORE_UNAVAILABLE',
    );
  }

  /** {@inheritDoc IdempotencyStore.heartbeat} */
  async heartbeat(key: string, token: string, leaseMs: number = IDEMPOTENCY_DEFAULTS.leaseMs): Promise<boolean> {
    const [k, t, lease] = [checkKey(key), checkToken(token), checkDuration(leaseMs, 'leaseMs')];
    return (await this.count('heartbeat', () => [k, t, this.testClock(), lease, this.retentionMs])) === 1;
  }

  /** {@inheritDoc IdempotencyStore.complete} */
  async complete(key: string, token: string, result: unknown, options?: FinishOptions): Promise<void> {
    const retention = finishRetention(options, this.retentionMs);
    await this.finish(checkKey(key), checkToken(token), 'completed', serializeResult(result), null, retention);
  }

  /** {@inheritDoc IdempotencyStore.fail} */
  async fail(key: string, token: string, error: StoredFailure, options?: FinishOptions): Promise<void> {
    const retention = finishRetention(options, this.retentionMs);
    await this.finish(checkKey(key), checkToken(token), 'failed', null, serializeFailure(error), retention);
  }

  /** {@inheritDoc IdempotencyStore.release} */
  async release(key: string, token: string): Promise<boolean> {
    const [k, t] = [checkKey(key), checkToken(token)];
    return (await this.count('release', () => [k, t, this.testClock()])) === 1;
  }

  /** {@inheritDoc IdempotencyStore.reap} */
  async reap(now?: number): Promise<number> {
    const at = now ?? this.testClock();
    const batch = POSTGRES_STORE_DEFAULTS.reapBatchSize;
    let total = 0;
    for (;;) {
      const deleted = await this.count('reap', () => [at, batch]);
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
    retentionMs: number,
  ): Promise<void> {
    const updated = await this.count('finish', () => [key, token, state, result, error, this.testClock(), retentionMs]);
    if (updated === 1) return;
    const [current] = await this.query<{ state: RecordState; token: string; owner: string }>('ownership', () => [
      key,
      this.testClock(),
    ]);
    acceptRepeatedFinish(key, current, token, state);
  }

  /** The injected clock's time, or null: the statement then reads the database's own clock. */
  private testClock(): number | null {
    return this.clock ? this.clock() : null;
  }

  /** Runs one statement (creating the table first if needed) and returns its rows. */
  private async query<R = unknown>(statement: StatementName, params: () => unknown[]): Promise<R[]> {
    return (await this.run(statement, params)).rows as R[];
  }

  /** Runs one write statement and returns how many rows it changed (no rows are sent back). */
  private async count(statement: StatementName, params: () => unknown[]): Promise<number> {
    return (await this.run(statement, params)).rowCount ?? 0;
  }

  /** Runs one statement (creating the table first if needed); `params` is called just before sending. */
  private async run(statement: StatementName, params: () => unknown[]): Promise<QueryResult> {
    if (this.closed) throw new IdempotencyStoreError('The idempotency store is closed.', 'STORE_CLOSED');
    try {
      await (this.ready ??= this.createTable());
      // Named: each connection parses and plans the statement once.
      const name = `${this.statementPrefix}_${statement}`;
      return await this.pool.query({ name, text: this.sql[statement], values: params() });
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
    try {
      await createTablesSerialized(this.pool, `durable-tools:${this.tableName}`, this.sql.create);
    } catch (error) {
      this.ready = undefined; // try again on the next call
      throw error;
    }
  }
}

/** The statements the store runs, by name (all but `create`). */
type StatementName = Exclude<keyof ReturnType<typeof statements>, 'create'>;

function statements(qualified: string, table: string, schema: string | undefined) {
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
    // Times come from the database's clock (or from the parameter when a test injects one), never a worker's;
    // statement_timestamp() is one value for the whole statement.
    // $1 key, $2 fingerprint, $3 token, $4 owner, $5 leaseMs, $6 retentionMs, $7 injected now or NULL.
    // Returns `now` when it inserted the new record, nothing when the key has a record (also one committed
    // by a concurrent inserter meanwhile: ON CONFLICT waits for it). Writes nothing then.
    insertNew: `
      INSERT INTO ${qualified} (key, fingerprint, state, token, owner, lease_expires_at, takeovers, created_at,
        updated_at, expires_at)
      VALUES ($1, $2, 'in_progress', $3, $4, ${storeNow('$7')} + $5::bigint, 0, ${storeNow('$7')}, ${storeNow('$7')},
        ${storeNow('$7')} + $5::bigint + $6::bigint)
      ON CONFLICT (key) DO NOTHING
      RETURNING created_at::text AS now`,
    // $1 key, $2 fingerprint, $3 token, $4 owner, $5 result, $6 retentionMs, $7 injected now or NULL.
    // Returns `now` when it inserted the completed record, nothing (writing nothing) when the key has a record.
    insertCompleted: `
      INSERT INTO ${qualified} (key, fingerprint, state, token, owner, result_json, takeovers, created_at,
        updated_at, expires_at)
      VALUES ($1, $2, 'completed', $3, $4, $5::json, 0, ${storeNow('$7')}, ${storeNow('$7')},
        ${storeNow('$7')} + $6::bigint)
      ON CONFLICT (key) DO NOTHING
      RETURNING created_at::text AS now`,
    // $1 key, $2 token read, $3 now (read with the record), $4 fingerprint, $5 new token, $6 owner,
    // $7 previous owner, $8 result, $9 retentionMs: a record past retention, or an in-progress one of this
    // fingerprint whose lease ran out, becomes the completed record, if nobody changed it since it was read.
    replaceWithCompleted: `
      UPDATE ${qualified}
      SET fingerprint = $4, state = 'completed', token = $5, owner = $6, previous_owner = $7,
        lease_expires_at = NULL, result_json = $8::json, error_json = NULL, takeovers = 0, created_at = $3,
        updated_at = $3, expires_at = $3 + $9::bigint
      WHERE key = $1 AND token = $2 AND (expires_at <= $3
        OR (state = 'in_progress' AND fingerprint = $4 AND lease_expires_at <= $3 AND expires_at > $3))`,
    // $1 key, $2 injected now or NULL: the record and the store's now.
    select: `
      SELECT ${storeNow('$2')}::text AS now, key, fingerprint, state, token, owner, previous_owner,
        lease_expires_at::text, takeovers, created_at::text, updated_at::text, expires_at::text,
        result_json::text, error_json::text
      FROM ${qualified} WHERE key = $1`,
    // $1 key, $2 token read, $3 now (the database's, read with the record), $4 fingerprint, $5 new token,
    // $6 owner, $7 previous owner, $8 lease_expires_at, $9 takeovers, $10 created_at, $11 expires_at,
    // $12 takeover grace (ms)
    claimFresh: claim(qualified, 'expires_at <= $3 AND $12::bigint >= 0'),
    // The holder was proved dead by the caller: its record is claimed while it still names that owner ($7).
    claimDeadHolder: claim(
      qualified,
      `state = 'in_progress' AND fingerprint = $4 AND owner = $7 AND expires_at > $3 AND $12::bigint >= 0`,
    ),
    claimTakeover: claim(
      qualified,
      `state = 'in_progress' AND fingerprint = $4 AND lease_expires_at + $12::bigint <= $3 AND expires_at > $3`,
    ),
    // $1 key, $2 token, $3 injected now or NULL, $4 leaseMs, $5 retentionMs
    heartbeat: `
      UPDATE ${qualified} SET lease_expires_at = ${storeNow('$3')} + $4::bigint, updated_at = ${storeNow('$3')},
        expires_at = ${storeNow('$3')} + $4::bigint + $5::bigint
      WHERE key = $1 AND token = $2 AND state = 'in_progress' AND expires_at > ${storeNow('$3')}`,
    // $1 key, $2 token, $3 state, $4 result, $5 error, $6 injected now or NULL, $7 retentionMs
    finish: `
      UPDATE ${qualified}
      SET state = $3, result_json = $4::json, error_json = $5::json, lease_expires_at = NULL,
        updated_at = ${storeNow('$6')}, expires_at = ${storeNow('$6')} + $7::bigint
      WHERE key = $1 AND token = $2 AND state = 'in_progress' AND expires_at > ${storeNow('$6')}`,
    ownership: `SELECT state, token, owner FROM ${qualified} WHERE key = $1 AND expires_at > ${storeNow('$2')}`,
    release: `
      DELETE FROM ${qualified} WHERE key = $1 AND token = $2 AND state = 'in_progress' AND expires_at > ${storeNow('$3')}`,
    reap: `
      DELETE FROM ${qualified} WHERE expires_at <= ${storeNow('$1')} AND key IN (
        SELECT key FROM ${qualified} WHERE expires_at <= ${storeNow('$1')} LIMIT $2 FOR UPDATE SKIP LOCKED)`,
  };
}

/**
 * The store's "now" in ms since the epoch: the database's clock (one value per statement), unless the
 * parameter carries a test's injected time.
 */
function storeNow(parameter: string): string {
  return `COALESCE(${parameter}::bigint, (extract(epoch FROM statement_timestamp()) * 1000)::bigint)`;
}

/** A compare-and-set claim: succeeds only if the token read is still current and `condition` still holds. */
function claim(qualified: string, condition: string): string {
  return `
    UPDATE ${qualified}
    SET fingerprint = $4, state = 'in_progress', token = $5, owner = $6, previous_owner = $7,
      lease_expires_at = $8, result_json = NULL, error_json = NULL, takeovers = $9, created_at = $10,
      updated_at = $3, expires_at = $11
    WHERE key = $1 AND token = $2 AND ${condition}`;
}

function fromRow(row: Row): IdempotencyRecord {
  return {
    key: row.key,
    fingerprint: row.fingerprint,
    state: row.state,
    token: row.token,
    owner: row.owner,
    previousOwner: row.previous_owner,
    leaseExpiresAt: row.lease_expires_at === null ? null : Number(row.lease_expires_at),
    resultJson: row.result_json,
    errorJson: row.error_json,
    takeovers: row.takeovers,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    expiresAt: Number(row.expires_at),
  };
}
