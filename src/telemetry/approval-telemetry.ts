import type { ApprovalAuditRecord } from '../contract/approval-types';
import type { EngineMetrics } from './engine-metrics';

/**
 * Records the end of an approval wait from the audit write that follows it: the write after a decision
 * (approved: no outcome yet) or the one of a call that was not run (rejected, timed out, cancelled). The
 * later write with the approved call's outcome is not a wait and is not counted.
 */
export function approvalWaitEnded(metrics: EngineMetrics, record: ApprovalAuditRecord): void {
  const waitEnded = record.outcome === undefined ? record.decision === 'approved' : record.outcome === 'not_run';
  if (!waitEnded) return;
  const attributes = { tool: record.tool, decision: record.decision ?? 'cancelled' };
  metrics.approvalWaits.add(1, attributes);
  const endedAt = record.decidedAt ?? record.completedAt;
  if (endedAt !== undefined) metrics.approvalWaitDuration.record(Math.max(0, endedAt - record.requestedAt), attributes);
}
