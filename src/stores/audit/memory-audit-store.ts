import type { ApprovalAuditRecord } from '../../contract/approval-types';
import type { RunGrant } from '../../contract/run-grant';
import { AUDIT_LIST_DEFAULT_LIMIT, auditPhase, type AuditQuery, type AuditStore } from './audit-store';
import type { RunGrantStore } from './run-grant-store';

/**
 * An audit store in this process's memory: for tests and for a worker that keeps no trail. A worker that
 * restarts loses it; use the SQLite or Postgres store for a real audit trail.
 */
export class MemoryAuditStore implements AuditStore, RunGrantStore {
  private readonly records = new Map<string, ApprovalAuditRecord>();
  private readonly grants = new Map<string, RunGrant>();

  /** {@inheritDoc RunGrantStore.recordGrant} */
  async recordGrant(grant: RunGrant): Promise<RunGrant> {
    const stored = this.grants.get(grant.workflowId);
    if (stored) return structuredClone(stored);
    this.grants.set(grant.workflowId, structuredClone(grant));
    return structuredClone(grant);
  }

  /** {@inheritDoc RunGrantStore.grantOf} */
  async grantOf(workflowId: string): Promise<RunGrant | undefined> {
    const stored = this.grants.get(workflowId);
    return stored ? structuredClone(stored) : undefined;
  }

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
