import type { ApprovalAuditRecord } from '../../contract/approval-types';

/** Which audit records to read. */
export interface AuditQuery {
  /** Only the records of this run (workflow id). */
  workflowId?: string;
  /** Only the records of this tool. */
  tool?: string;
  /** At most this many, newest request first (default 100). */
  limit?: number;
}

/**
 * The durable audit trail of gated tool calls: one record per call that needed approval, keyed by the
 * call's idempotency key, written when approval is requested and completed with the decision and the
 * outcome. Writes are upserts that never go back: a write of an earlier phase (a retried activity) does not
 * overwrite a later one.
 */
export interface AuditStore {
  /** Creates or completes the record of `record.idempotencyKey`. */
  write(record: ApprovalAuditRecord): Promise<void>;
  /** The record of one gated call, or undefined. */
  get(idempotencyKey: string): Promise<ApprovalAuditRecord | undefined>;
  /** Records matching the query, newest request first. */
  list(query?: AuditQuery): Promise<ApprovalAuditRecord[]>;
  close(): Promise<void>;
}

/** Default number of records {@link AuditStore.list} returns. */
export const AUDIT_LIST_DEFAULT_LIMIT = 100;

/** How far a record has come: requested (1), decided (2), finished (3). A write never lowers it. */
export function auditPhase(record: ApprovalAuditRecord): number {
  if (record.outcome !== undefined) return 3;
  if (record.decision !== undefined) return 2;
  return 1;
}
