import { Pool, type PoolClient } from 'pg';
import { IDEMPOTENCY_DEFAULTS, IDEMPOTENCY_ENV } from '../idempotency/idempotency-defaults';
import { withPooledClient } from '../pooled-client';
import { createTablesSerialized, POSTGRES_IDENTIFIER } from '../create-tables';
import type { ApprovalAuditRecord } from '../../contract/approval-types';
import { AUDIT_ADDED_COLUMNS, AUDIT_COLUMNS, auditRecordFromRow, auditRowValues, type AuditRow } from './audit-rows';
import { AUDIT_LIST_DEFAULT_LIMIT, type AuditQuery, type AuditStore } from './audit-store';
import { AuditStoreError } from './audit-store-error';
import type { RunGrant } from '../../contract/run-grant';
import { grantFromJson, type RunGrantStore } from './run-grant-store';

/** Defaults of the Postgres audit store. */
export const POSTGRES_AUDIT_DEFAULTS = {
  /** Table of the store (the SQLite store's table has the same name and columns). */
  table: 'approval_audit',
  /** Table of the runs' grants (docs/security.md, "Authority of a run"), in the audit table's schema. */
  grantsTable: 'run_grants',
  poolSize: 5,
  /** How long to wait for a connection before failing with `STORE_UNAVAILABLE`. */
  connectionTimeoutMs: 5_000,
  /** Postgres used when neither options nor `DURABLE_TOOLS_POSTGRES_URL` name one (the idempotency store's). */
  postgresUrl: IDEMPOTENCY_DEFAULTS.postgresUrl,
} as const;

/** Options of {@link PostgresAuditStore}. */
export interface PostgresAuditStoreOptions {
  /** Default: `DURABLE_TOOLS_POSTGRES_URL`, else `postgres://postgres@127.0.0.1:5432/test`. Ignored with `pool`. */
  connectionString?: string;
  /** A pool to use instead of creating one; `close()` leaves it open. */
  pool?: Pool;
  /** Table name (letters, digits, `_`, at most 48). Default `approval_audit`. */
  table?: string;
  /** Schema of the table, created if missing. Default: the connection's search path (usually `public`). */
  schema?: string;
  /** Create the schema and table when missing (default true). */
  createTable?: boolean;
}

/**
 * An {@link AuditStore} in one Postgres table, for workers on several machines: every worker writes the
 * records of the gated calls it handles, and any machine reads the whole trail.
 *
 * @example
 * ```ts
 * const auditStore = new PostgresAuditStore({ connectionString: process.env.DURABLE_TOOLS_POSTGRES_URL });
 * ```
 */
export class PostgresAuditStore implements AuditStore, RunGrantStore {
  /** The quoted, schema-qualified table name. */
  readonly tableName: string;
  /** The quoted, schema-qualified name of the grants table. */
  readonly grantsTableName: string;
  private readonly pool: Pool;
  private readonly ownsPool: boolean;
  private readonly schema: string | undefined;
  private ready: Promise<void> | undefined;
  private closed = false;

  constructor(options: PostgresAuditStoreOptions = {}) {
    const table = options.table ?? POSTGRES_AUDIT_DEFAULTS.table;
    this.schema = options.schema;
    for (const name of this.schema === undefined ? [table] : [table, this.schema]) {
      if (!POSTGRES_IDENTIFIER.test(name)) {
        throw new AuditStoreError(`Invalid Postgres identifier "${name}".`, 'INVALID_CONFIG');
      }
    }
    this.tableName = this.schema === undefined ? `"${table}"` : `"${this.schema}"."${table}"`;
    const grants = `${table === POSTGRES_AUDIT_DEFAULTS.table ? '' : `${table}_`}${POSTGRES_AUDIT_DEFAULTS.grantsTable}`;
    this.grantsTableName = this.schema === undefined ? `"${grants}"` : `"${this.schema}"."${grants}"`;
    if (options.pool) {
      this.pool = options.pool;
      this.ownsPool = false;
    } else {
      this.pool = new Pool({
        connectionString:
          options.connectionString ?? process.env[IDEMPOTENCY_ENV.postgresUrl] ?? POSTGRES_AUDIT_DEFAULTS.postgresUrl,
        max: POSTGRES_AUDIT_DEFAULTS.poolSize,
        connectionTimeoutMillis: POSTGRES_AUDIT_DEFAULTS.connectionTimeoutMs,
      });
      this.ownsPool = true;
      // An idle connection that breaks emits 'error' on the pool; unhandled, it would crash the process.
      this.pool.on('error', () => undefined);
    }
    if (options.createTable === false) this.ready = Promise.resolve();
  }

  /** {@inheritDoc AuditStore.write} */
  async write(record: ApprovalAuditRecord): Promise<void> {
    const updates = AUDIT_COLUMNS.filter((c) => c !== 'idempotency_key')
      .map((c) => `${c} = EXCLUDED.${c}`)
      .join(', ');
    const placeholders = AUDIT_COLUMNS.map((c, i) => (c === 'arguments' ? `$${i + 1}::json` : `$${i + 1}`));
    await this.run((client) =>
      client.query(
        `INSERT INTO ${this.tableName} (${AUDIT_COLUMNS.join(', ')}) VALUES (${placeholders.join(', ')})
         ON CONFLICT (idempotency_key) DO UPDATE SET ${updates} WHERE EXCLUDED.phase >= ${this.tableName}.phase`,
        auditRowValues(record),
      ),
    );
  }

  /** {@inheritDoc AuditStore.get} */
  async get(idempotencyKey: string): Promise<ApprovalAuditRecord | undefined> {
    const { rows } = await this.run((client) =>
      client.query<AuditRow>(`${this.select()} WHERE idempotency_key = $1`, [idempotencyKey]),
    );
    return rows[0] ? auditRecordFromRow(rows[0]) : undefined;
  }

  /** {@inheritDoc AuditStore.list} */
  async list(query: AuditQuery = {}): Promise<ApprovalAuditRecord[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (query.workflowId !== undefined) {
      params.push(query.workflowId);
      where.push(`workflow_id = $${params.length}`);
    }
    if (query.tool !== undefined) {
      params.push(query.tool);
      where.push(`tool = $${params.length}`);
    }
    params.push(query.limit ?? AUDIT_LIST_DEFAULT_LIMIT);
    const { rows } = await this.run((client) =>
      client.query<AuditRow>(
        `${this.select()} ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY requested_at DESC, step_id DESC LIMIT $${params.length}`,
        params,
      ),
    );
    return rows.map(auditRecordFromRow);
  }

  /** {@inheritDoc RunGrantStore.recordGrant} */
  async recordGrant(grant: RunGrant): Promise<RunGrant> {
    await this.run((client) =>
      client.query(
        `INSERT INTO ${this.grantsTableName} (workflow_id, run_grant) VALUES ($1, $2) ON CONFLICT (workflow_id) DO NOTHING`,
        [grant.workflowId, JSON.stringify(grant)],
      ),
    );
    return (await this.grantOf(grant.workflowId)) ?? grant;
  }

  /** {@inheritDoc RunGrantStore.grantOf} */
  async grantOf(workflowId: string): Promise<RunGrant | undefined> {
    const { rows } = await this.run((client) =>
      client.query<{ run_grant: string }>(`SELECT run_grant FROM ${this.grantsTableName} WHERE workflow_id = $1`, [
        workflowId,
      ]),
    );
    return rows[0] ? grantFromJson(workflowId, rows[0].run_grant) : undefined;
  }

  /** {@inheritDoc AuditStore.close} */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsPool) await this.pool.end();
  }

  private select(): string {
    return `SELECT ${AUDIT_COLUMNS.map((c) => (c === 'arguments' ? 'arguments::text AS arguments' : c)).join(', ')} FROM ${this.tableName}`;
  }

  /** Runs `work` on a pooled connection (creating the table first if needed), wrapping failures. */
  private async run<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    if (this.closed) throw new AuditStoreError('The audit store is closed.', 'STORE_CLOSED');
    try {
      await (this.ready ??= this.createTable());
      return await withPooledClient(this.pool, work);
    } catch (error) {
      throw new AuditStoreError(`The Postgres audit store failed: ${(error as Error).message}`, 'STORE_UNAVAILABLE', {
        cause: error,
      });
    }
  }

  private async createTable(): Promise<void> {
    const statements = [
      ...(this.schema === undefined ? [] : [`CREATE SCHEMA IF NOT EXISTS "${this.schema}"`]),
      `CREATE TABLE IF NOT EXISTS ${this.tableName} (
        idempotency_key TEXT PRIMARY KEY,
        workflow_id TEXT NOT NULL,
        step_id INTEGER NOT NULL,
        tool TEXT NOT NULL,
        arguments_digest TEXT NOT NULL,
        arguments JSON NOT NULL,
        requested_at BIGINT NOT NULL,
        deadline BIGINT NOT NULL,
        decision TEXT,
        decided_by TEXT,
        reason TEXT,
        decided_at BIGINT,
        outcome TEXT,
        outcome_code TEXT,
        completed_at BIGINT,
        phase INTEGER NOT NULL
      )`,
      // A table from before approve with edits gets its columns.
      ...AUDIT_ADDED_COLUMNS.map(
        ([column, type]) => `ALTER TABLE ${this.tableName} ADD COLUMN IF NOT EXISTS ${column} ${type}`,
      ),
      `CREATE TABLE IF NOT EXISTS ${this.grantsTableName} (workflow_id TEXT PRIMARY KEY, run_grant TEXT NOT NULL)`,
    ];
    try {
      await createTablesSerialized(this.pool, `durable-tools:${this.tableName}`, statements);
    } catch (error) {
      this.ready = undefined; // try again on the next call
      throw error;
    }
  }
}
