import type { ApprovalAuditRecord } from '../../contract/approval-types';
import { AUDIT_LIST_DEFAULT_LIMIT, auditPhase, type AuditQuery, type AuditStore } from './audit-store';

/**
 * An audit store in this process's memory: for tests and for a worker that keeps no trail. A worker that
 * restarts loses it; use the SQLite or Postgres store for a real audit trail.
 */
export class MemoryAuditStore implements AuditStore {
  private readonly records = new Map<string, ApprovalAuditRecord>();

  async write(record: ApprovalAuditRecord): Promise<void> {
    const stored = this.records.get(record.idempotencyKey);
    if (stored && auditPhase(stored) > auditPhase(record)) return;
    this.records.set(record.idempotencyKey, structuredClone(record));
  }

  async get(idempotencyKey: string): Promise<ApprovalAuditRecord | undefined> {
    const stored = this.records.get(idempotencyKey);
    return stored ? structuredClone(stored) : undefined;
  }

  async list(query: AuditQuery = {}): Promise<ApprovalAuditRecord[]> {
    return [...this.records.values()]
      .filter(
        (r) =>
          (query.workflowId === undefined || r.workflowId === query.workflowId) &&
          (query.tool === undefined || r.tool === query.tool),
      )
      .sort((a, b) => b.requestedAt - a.requestedAt || b.stepId - a.stepId)
      .slice(0, query.limit ?? AUDIT_LIST_DEFAULT_LIMIT)
      .map((r) => structuredClone(r));
  }

  async close(): Promise<void> {}
}
