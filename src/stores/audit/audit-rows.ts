import type { ApprovalAuditRecord, ApprovalOutcome } from '../../contract/approval-types';
import type { CallerIdentity } from '../../contract/caller-identity';
import { auditPhase } from './audit-store';

/** Columns of the audit table, the same in SQLite and Postgres (times are ms since epoch). */
export const AUDIT_COLUMNS = [
  'idempotency_key',
  'workflow_id',
  'step_id',
  'tool',
  'arguments_digest',
  'arguments',
  'requested_at',
  'deadline',
  'decision',
  'decided_by',
  'reason',
  'decided_at',
  'outcome',
  'outcome_code',
  'completed_at',
  'phase',
  'edited_arguments_digest',
  'edited_arguments',
  'decided_by_identity',
] as const;

/**
 * Columns added after the table's first version (approve with edits), each with its SQL type: a store adds the
 * ones an existing table lacks when it opens it.
 */
export const AUDIT_ADDED_COLUMNS = [
  ['edited_arguments_digest', 'TEXT'],
  ['edited_arguments', 'TEXT'],
  ['decided_by_identity', 'TEXT'],
] as const;

/** One row of the audit table. */
export interface AuditRow {
  idempotency_key: string;
  workflow_id: string;
  step_id: number;
  tool: string;
  arguments_digest: string;
  /** JSON text. */
  arguments: string;
  requested_at: number;
  deadline: number;
  decision: string | null;
  decided_by: string | null;
  reason: string | null;
  decided_at: number | null;
  outcome: string | null;
  outcome_code: string | null;
  completed_at: number | null;
  phase: number;
  edited_arguments_digest: string | null;
  /** JSON text. */
  edited_arguments: string | null;
  /** JSON text of the decider's identity (subject, issuer, client), or null. */
  decided_by_identity?: string | null;
}

/** The row values of a record, in {@link AUDIT_COLUMNS} order. */
export function auditRowValues(record: ApprovalAuditRecord): unknown[] {
  return [
    record.idempotencyKey,
    record.workflowId,
    record.stepId,
    record.tool,
    record.argumentsDigest,
    JSON.stringify(record.arguments ?? null),
    record.requestedAt,
    record.deadline,
    record.decision ?? null,
    record.decidedBy ?? null,
    record.reason ?? null,
    record.decidedAt ?? null,
    record.outcome ?? null,
    record.outcomeCode ?? null,
    record.completedAt ?? null,
    auditPhase(record),
    record.editedArgumentsDigest ?? null,
    record.editedArgumentsDigest !== undefined ? JSON.stringify(record.editedArguments ?? null) : null,
    record.decidedByIdentity ? JSON.stringify(record.decidedByIdentity) : null,
  ];
}

/** The record a row holds (Postgres returns BIGINT as strings: numbers are converted). */
export function auditRecordFromRow(row: AuditRow): ApprovalAuditRecord {
  const num = (value: unknown) => (value === null || value === undefined ? undefined : Number(value));
  return {
    idempotencyKey: row.idempotency_key,
    workflowId: row.workflow_id,
    stepId: Number(row.step_id),
    tool: row.tool,
    argumentsDigest: row.arguments_digest,
    arguments: JSON.parse(row.arguments) as unknown,
    requestedAt: Number(row.requested_at),
    deadline: Number(row.deadline),
    ...(row.decision !== null ? { decision: row.decision as NonNullable<ApprovalAuditRecord['decision']> } : {}),
    ...(row.decided_by !== null ? { decidedBy: row.decided_by } : {}),
    ...(row.reason !== null ? { reason: row.reason } : {}),
    ...(row.decided_at !== null ? { decidedAt: num(row.decided_at)! } : {}),
    ...(row.outcome !== null ? { outcome: row.outcome as ApprovalOutcome } : {}),
    ...(row.outcome_code !== null ? { outcomeCode: row.outcome_code } : {}),
    ...(row.completed_at !== null ? { completedAt: num(row.completed_at)! } : {}),
    ...(row.edited_arguments_digest != null
      ? {
          editedArgumentsDigest: row.edited_arguments_digest,
          editedArguments: JSON.parse(row.edited_arguments ?? 'null') as unknown,
        }
      : {}),
    ...(row.decided_by_identity ? { decidedByIdentity: JSON.parse(row.decided_by_identity) as CallerIdentity } : {}),
  };
}
