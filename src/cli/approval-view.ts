/**
 * How the approval commands show a waiting call and an audit record.
 */
import type { PendingApproval } from '../client/approval-client';
import type { ApprovalAuditRecord } from '../contract/approval-types';
import { TOOL_ERROR_CODES } from '../contract/activity-protocol';

/** Width of argument previews in `pending` and `audit`. */
const ARGUMENTS_PREVIEW = 120;

/** The lines `pending` prints for one waiting call: run, step, tool, arguments; digest and deadline. */
export function pendingCallLines(call: PendingApproval): string[] {
  return [
    `${call.workflowId}  step ${call.stepId}  ${call.tool}  ${oneLine(call.arguments)}`,
    `    digest ${call.digest}`,
    `    waiting since ${iso(call.requestedAt)}, counts as rejected at ${iso(call.deadline)}`,
    ...(call.parent ? [`    sub-agent of ${call.parent.workflowId} step ${call.parent.stepId}`] : []),
  ];
}

/** What `approve` and `reject` print before they act: the run, step, tool, the full arguments and the digest. */
export function callUnderReviewLines(call: PendingApproval): string[] {
  const args = JSON.stringify(call.arguments, null, 2) ?? 'undefined';
  return [
    `run       ${call.workflowId}`,
    `step      ${call.stepId}`,
    `tool      ${call.tool}`,
    `arguments ${args.replace(/\n/g, '\n          ')}`,
    `digest    ${call.digest}`,
    `deadline  ${iso(call.deadline)} (no decision by then counts as a rejection)`,
  ];
}

/** One audit record: the call, then its digest, decision and outcome. */
export function auditRecordLines(r: ApprovalAuditRecord): string[] {
  const decision = r.decision
    ? [
        r.decision,
        r.decidedBy ? `by ${r.decidedBy}` : undefined,
        r.decidedAt !== undefined ? `at ${iso(r.decidedAt)}` : undefined,
        r.reason ? `(${r.reason})` : undefined,
      ]
        .filter((part) => part !== undefined)
        .join(' ')
    : undecidedLine(r);
  const outcome = r.outcome
    ? `${r.outcome}${r.outcomeCode ? ` ${r.outcomeCode}` : ''}${r.completedAt !== undefined ? ` at ${iso(r.completedAt)}` : ''}`
    : '-';
  return [
    `${r.idempotencyKey}  ${r.tool}  ${oneLine(r.arguments)}`,
    `    digest    ${r.argumentsDigest}`,
    // Approved with edits: what ran instead of the model's arguments, and its digest.
    ...(r.editedArgumentsDigest !== undefined
      ? [`    edited    ${oneLine(r.editedArguments)}`, `    edited digest ${r.editedArgumentsDigest}`]
      : []),
    `    requested ${iso(r.requestedAt)}`,
    `    decision  ${decision}`,
    `    outcome   ${outcome}`,
  ];
}

/**
 * The decision line of a call nobody decided on: still waiting only while it has no outcome; a call whose run
 * was cancelled while it waited is `cancelled`.
 */
function undecidedLine(r: ApprovalAuditRecord): string {
  if (r.outcome === undefined) return 'waiting for a decision';
  if (r.outcomeCode === TOOL_ERROR_CODES.CANCELLED) return 'cancelled (the run was cancelled while the call waited)';
  return `none (${r.outcome}${r.outcomeCode ? ` ${r.outcomeCode}` : ''})`;
}

function oneLine(value: unknown): string {
  const text = (JSON.stringify(value) ?? 'undefined').replace(/\s+/g, ' ');
  return text.length > ARGUMENTS_PREVIEW ? `${text.slice(0, ARGUMENTS_PREVIEW - 1)}…` : text;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
