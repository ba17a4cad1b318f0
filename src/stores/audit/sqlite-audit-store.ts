import Database from 'better-sqlite3';
import { preparePrivateStateFile } from '../private-state';
import type { ApprovalAuditRecord } from '../../contract/approval-types';
import { AUDIT_ADDED_COLUMNS, AUDIT_COLUMNS, auditRecordFromRow, auditRowValues, type AuditRow } from './audit-rows';
import { AUDIT_LIST_DEFAULT_LIMIT, type AuditQuery, type AuditStore } from './audit-store';
import { AuditStoreError } from './audit-store-error';
import type { RunGrant } from '../../contract/run-grant';
import { grantFromJson, type RunGrantStore } from './run-grant-store';

/** Defaults of the SQLite audit store. */
export const SQLITE_AUDIT_DEFAULTS = {
  path: '.data/audit.sqlite',
  table: 'approval_audit',
  /** Table of the runs' grants (docs/security.md, "Authority of a run"). */
  grantsTable: 'run_grants',
  busyTimeoutMs: 5000,
} as const;

/**
 * An audit store in a SQLite file: the embedded default of a worker process. Shared by the worker
 * processes of one machine and readable by `durable-tools audit` on that machine. The file and its -wal / -shm
 * files are 0600, a directory it creates 0700 (docs/at-rest.md).
 */
export class SqliteAuditStore implements AuditStore, RunGrantStore {
  private readonly db: Database.Database;
  private closed = false;

  constructor(options: { path?: string } = {}) {
    const path = options.path ?? SQLITE_AUDIT_DEFAULTS.path;
    // 0600 before SQLite opens it (its -wal and -shm files take that mode), in a 0700 directory when created.
    preparePrivateStateFile(path);
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`busy_timeout = ${SQLITE_AUDIT_DEFAULTS.busyTimeoutMs}`);
    this.db.exec(`CREATE TABLE IF NOT EXISTS ${SQLITE_AUDIT_DEFAULTS.table} (
      idempotency_key TEXT PRIMARY KEY,
      workflow_id TEXT NOT NULL,
      step_id INTEGER NOT NULL,
      tool TEXT NOT NULL,
      arguments_digest TEXT NOT NULL,
      arguments TEXT NOT NULL,
      requested_at INTEGER NOT NULL,
      deadline INTEGER NOT NULL,
      decision TEXT,
      decided_by TEXT,
      reason TEXT,
      decided_at INTEGER,
      outcome TEXT,
      outcome_code TEXT,
      completed_at INTEGER,
      phase INTEGER NOT NULL
    )`);
    // A table from before approve with edits (or the deciders' identities) gets its columns.
    const columns = new Set(
      (this.db.prepare(`PRAGMA table_info(${SQLITE_AUDIT_DEFAULTS.table})`).all() as { name: string }[]).map(
        (column) => column.name,
      ),
    );
    for (const [column, type] of AUDIT_ADDED_COLUMNS) {
      if (!columns.has(column)) this.db.exec(`ALTER TABLE ${SQLITE_AUDIT_DEFAULTS.table} ADD COLUMN ${column} ${type}`);
    }
    this.db.exec(
      `CREATE INDEX IF NOT EXISTS ${SQLITE_AUDIT_DEFAULTS.table}_by_run ON ${SQLITE_AUDIT_DEFAULTS.table} (workflow_id, step_id)`,
    );
    this.db.exec(
      `CREATE TABLE IF NOT EXISTS ${SQLITE_AUDIT_DEFAULTS.grantsTable} (workflow_id TEXT PRIMARY KEY, run_grant TEXT NOT NULL)`,
    );
  }

  /** {@inheritDoc RunGrantStore.recordGrant} */
  async recordGrant(grant: RunGrant): Promise<RunGrant> {
    const table = SQLITE_AUDIT_DEFAULTS.grantsTable;
    this.open()
      .prepare(`INSERT INTO ${table} (workflow_id, run_grant) VALUES (?, ?) ON CONFLICT (workflow_id) DO NOTHING`)
      .run(grant.workflowId, JSON.stringify(grant));
    return (await this.grantOf(grant.workflowId)) ?? grant;
  }

  /** {@inheritDoc RunGrantStore.grantOf} */
  async grantOf(workflowId: string): Promise<RunGrant | undefined> {
    const row = this.open()
      .prepare(`SELECT run_grant FROM ${SQLITE_AUDIT_DEFAULTS.grantsTable} WHERE workflow_id = ?`)
      .get(workflowId) as { run_grant: string } | undefined;
    return row ? grantFromJson(workflowId, row.run_grant) : undefined;
  }

  /** {@inheritDoc AuditStore.write} */
  async write(record: ApprovalAuditRecord): Promise<void> {
    const table = SQLITE_AUDIT_DEFAULTS.table;
    const updates = AUDIT_COLUMNS.filter((c) => c !== 'idempotency_key')
      .map((c) => `${c} = excluded.${c}`)
      .join(', ');
    this.open()
      .prepare(
        `INSERT INTO ${table} (${AUDIT_COLUMNS.join(', ')}) VALUES (${AUDIT_COLUMNS.map(() => '?').join(', ')})
         ON CONFLICT (idempotency_key) DO UPDATE SET ${updates} WHERE excluded.phase >= ${table}.phase`,
      )
      .run(...auditRowValues(record));
  }

  /** {@inheritDoc AuditStore.get} */
  async get(idempotencyKey: string): Promise<ApprovalAuditRecord | undefined> {
    const row = this.open()
      .prepare(`SELECT * FROM ${SQLITE_AUDIT_DEFAULTS.table} WHERE idempotency_key = ?`)
      .get(idempotencyKey) as AuditRow | undefined;
    return row ? auditRecordFromRow(row) : undefined;
  }

  /** {@inheritDoc AuditStore.list} */
  async list(query: AuditQuery = {}): Promise<ApprovalAuditRecord[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (query.workflowId !== undefined) {
      where.push('workflow_id = ?');
      params.push(query.workflowId);
    }
    if (query.tool !== undefined) {
      where.push('tool = ?');
      params.push(query.tool);
    }
    const rows = this.open()
      .prepare(
        `SELECT * FROM ${SQLITE_AUDIT_DEFAULTS.table} ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY requested_at DESC, step_id DESC LIMIT ?`,
      )
      .all(...params, query.limit ?? AUDIT_LIST_DEFAULT_LIMIT) as AuditRow[];
    return rows.map(auditRecordFromRow);
  }

  /** {@inheritDoc AuditStore.close} */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }

  private open(): Database.Database {
    if (this.closed) throw new AuditStoreError('The audit store is closed.', 'STORE_CLOSED');
    return this.db;
  }
}
