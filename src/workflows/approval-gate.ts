import {
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { ApprovalActivities } from '../activities/approval-activities';
import {
  APPROVAL_REFUSAL_CODES,
  type ApprovalAuditRecord,
  type ApprovalDecisionInput,
  type ApprovalDecisionResult,
  type RunApprovalPolicy,
} from '../contract/approval-types';
import { SEARCH_ATTRIBUTES } from '../contract/search-attributes';
import { identityRecord, type CallerIdentity } from '../contract/caller-identity';
import { opensAtOnce, runOverride } from './approval-override';
import { DEFAULT_APPROVAL_TIMEOUT_MS } from '../contract/approval-policy';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { TOOL_ERROR_CODES, type ToolErrorObservation } from '../contract/activity-protocol';
import type { AgentRunState, StepRecord } from '../contract/agent-run-types';
import { approvalTimerSummary, waitingDetails } from './approval-details';
import { decideApprovalUpdate } from '../contract/approval-messages';
import { checkEditShape, editsArguments, reviewEdit, type ApprovedEdit } from './approval-edits';

/** Options of the engine's approval activities: a few minutes of retries, then the call is refused. */
const APPROVAL_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 10, initialInterval: '1 second', maximumInterval: '30 seconds' },
} as const;

const { evaluateApproval, recordApprovalAudit } = proxyActivities<ApprovalActivities>(APPROVAL_ACTIVITY_OPTIONS);

/** Bounds of what a decision may carry. */
const DECISION_LIMITS = { approverLength: 200, reasonLength: 2000 } as const;

/** A decision the update handler recorded for a waiting call. */
interface Decision {
  decision: 'approved' | 'rejected';
  approver: string;
  approverIdentity?: CallerIdentity;
  reason?: string;
  decidedAt: number;
  /** The approver's edited arguments, validated by the worker: the call runs with them. */
  edit?: ApprovedEdit;
}

/** A call waiting for its decision. */
interface WaitingCall {
  step: StepRecord;
  digest: string;
  decision?: Decision;
}

/** The run's approval gate: its policy and the calls waiting for a decision. */
export interface ApprovalGate {
  workflowId: string;
  policy: RunApprovalPolicy;
  /** Keep the `DurableAwaitingApproval` search attribute up to date. */
  track: boolean;
  state: AgentRunState;
  waiting: Map<number, WaitingCall>;
  /**
   * Shows the waiting calls (current details, search attribute) in place of the gate's own: set when several
   * gates share one workflow (approval-desk.ts).
   */
  publish?: () => void;
}

/** What the gate decided for one call. */
export type GateResult =
  | { kind: 'open' }
  /** Approved: the digest the activity checks; `arguments` when the approver edited them (the call runs with them). */
  | { kind: 'approved'; digest: string; arguments?: unknown }
  | { kind: 'refused'; observation: ToolErrorObservation };

/** Creates the gate of a run and installs the `decideApproval` update handler. */
export function createApprovalGate(
  workflowId: string,
  state: AgentRunState,
  policy: RunApprovalPolicy | undefined,
  track: boolean,
): ApprovalGate {
  const gate = newApprovalGate(workflowId, state, policy, track);
  setHandler(decideApprovalUpdate, (input) => decide(gate, input), {
    validator: (input) => validateDecision(gate, input),
  });
  return gate;
}

/**
 * A gate without its update handler: for a gate that shares the workflow's one `decideApproval` handler with
 * other gates (approval-desk.ts), which routes each decision with {@link validateDecision} and {@link applyDecision}.
 */
export function newApprovalGate(
  workflowId: string,
  state: AgentRunState,
  policy: RunApprovalPolicy | undefined,
  track: boolean,
): ApprovalGate {
  return { workflowId, policy: policy ?? {}, track, state, waiting: new Map() };
}

/**
 * Gates one call: asks the worker (recorded) whether it needs approval under the tool's and the run's
 * policy; if so the step waits in `awaiting_approval`, with the run marked in `DurableAwaitingApproval`,
 * until a decision bound to the digest of its validated arguments arrives or the timeout rejects it.
 * Only cancellation escapes.
 */
export async function passApprovalGate(
  step: StepRecord,
  entry: ToolCatalogEntry,
  gate: ApprovalGate,
): Promise<GateResult> {
  const override = runOverride(entry, gate.policy);
  if (opensAtOnce(entry, gate.policy)) return { kind: 'open' };
  const requestedAt = Date.now();
  const timeoutMs = gate.policy.timeoutMs ?? entry.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
  let evaluation;
  try {
    evaluation = await evaluateApproval({
      workflowId: gate.workflowId,
      stepId: step.stepId,
      idempotencyKey: step.idempotencyKey,
      tool: entry.name,
      arguments: step.arguments,
      ...(override ? { runOverride: override } : {}),
      requestedAt,
      deadline: requestedAt + timeoutMs,
    });
  } catch (error) {
    if (isCancellation(error)) throw error;
    return { kind: 'refused', observation: unavailable(entry.name, 'its approval could not be requested') };
  }
  for (const note of evaluation.notes)
    if (!gate.state.policyWarnings.includes(note)) gate.state.policyWarnings.push(note);
  if (evaluation.status === 'invalid') return { kind: 'refused', observation: evaluation.observation };
  if (evaluation.status === 'not_required') return { kind: 'open' };

  step.status = 'awaiting_approval';
  step.approval = {
    digest: evaluation.digest,
    arguments: evaluation.arguments,
    requestedAt,
    deadline: requestedAt + timeoutMs,
  };
  const decision = await waitForDecision(step, evaluation.digest, timeoutMs, gate);
  Object.assign(step.approval, {
    decision: decision?.decision ?? 'timed_out',
    ...(decision ? { decidedBy: decision.approver, decidedAt: decision.decidedAt } : { decidedAt: Date.now() }),
    ...(decision?.approverIdentity ? { decidedByIdentity: decision.approverIdentity } : {}),
    ...(decision?.reason !== undefined ? { reason: decision.reason } : {}),
    ...(decision?.edit ? { editedArguments: decision.edit.arguments, editedDigest: decision.edit.digest } : {}),
  });
  if (!decision || decision.decision === 'rejected') return refuseUndecided(step, entry, gate, timeoutMs);
  try {
    await writeAudit(step, {});
  } catch (error) {
    if (isCancellation(error)) throw error;
    return {
      kind: 'refused',
      observation: unavailable(entry.name, 'its approval could not be written to the audit trail'),
    };
  }
  const edit = decision.edit;
  return edit
    ? { kind: 'approved', digest: edit.digest, arguments: edit.arguments }
    : { kind: 'approved', digest: evaluation.digest };
}

/** A call rejected, or not decided in time: nothing runs, and the audit trail says so. */
async function refuseUndecided(
  step: StepRecord,
  entry: ToolCatalogEntry,
  gate: ApprovalGate,
  timeoutMs: number,
): Promise<GateResult> {
  const observation = rejection(step, entry.name, timeoutMs);
  await writeAudit(step, { outcome: 'not_run', outcomeCode: observation.code, completedAt: Date.now() }).catch(() =>
    warn(gate, `The audit record of step ${step.stepId} could not be completed.`),
  );
  return { kind: 'refused', observation };
}

/** Completes the audit record of an approved call with its outcome. */
export async function recordApprovalOutcome(step: StepRecord, gate: ApprovalGate): Promise<void> {
  if (step.approval?.decision !== 'approved') return;
  const outcome = step.status === 'succeeded' ? 'succeeded' : 'failed';
  const code = step.observation?.status === 'error' ? step.observation.code : undefined;
  await writeAudit(step, { outcome, ...(code ? { outcomeCode: code } : {}), completedAt: Date.now() }).catch(() =>
    warn(gate, `The audit record of step ${step.stepId} could not be completed.`),
  );
}

/** The abort reason when a rejection aborts the run under its policy (`onRejection: 'abort'`). */
export function approvalRejectionVerdict(
  record: StepRecord,
  policy: RunApprovalPolicy | undefined,
): string | undefined {
  const approval = record.approval;
  if (policy?.onRejection !== 'abort' || !approval || approval.decision === 'approved' || !approval.decision) {
    return undefined;
  }
  return approval.decision === 'timed_out'
    ? `Step ${record.stepId} (${record.tool}) got no approval in time.`
    : `Step ${record.stepId} (${record.tool}) was rejected by ${approval.decidedBy}: ${approval.reason ?? ''}`.trim();
}

async function waitForDecision(
  step: StepRecord,
  digest: string,
  timeoutMs: number,
  gate: ApprovalGate,
): Promise<Decision | undefined> {
  const waiting: WaitingCall = { step, digest };
  gate.waiting.set(step.stepId, waiting);
  publishWaiting(gate);
  try {
    await condition(() => waiting.decision !== undefined, timeoutMs, { summary: approvalTimerSummary(step, digest) });
    return waiting.decision;
  } catch (error) {
    if (isCancellation(error)) {
      step.status = 'failed';
      step.observation = {
        status: 'error',
        code: TOOL_ERROR_CODES.CANCELLED,
        message: `The run was cancelled while "${step.tool}" waited for approval; nothing was run.`,
        hint: 'The run is being cancelled.',
        retryable: false,
        attempts: 0,
      };
      await CancellationScope.nonCancellable(() =>
        writeAudit(step, { outcome: 'not_run', outcomeCode: TOOL_ERROR_CODES.CANCELLED, completedAt: Date.now() }),
      ).catch(() => undefined);
    }
    throw error;
  } finally {
    gate.waiting.delete(step.stepId);
    publishWaiting(gate);
  }
}

/** Shows the waiting calls in the workflow's current details and, when tracked, the search attribute. */
function publishWaiting(gate: ApprovalGate): void {
  if (gate.publish) return gate.publish();
  setCurrentDetails(waitingDetails(gate.workflowId, [...gate.waiting.values()]));
  if (!gate.track) return;
  const tools = [...new Set([...gate.waiting.values()].map((w) => w.step.tool))].sort();
  upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.awaitingApproval, value: tools.length > 0 ? tools : null }]);
}

/** The update's validator: refuses a malformed decision, an unknown or decided step and a wrong digest. */
export function validateDecision(gate: ApprovalGate, input: ApprovalDecisionInput): void {
  const invalid = (message: string) =>
    ApplicationFailure.create({ type: APPROVAL_REFUSAL_CODES.INVALID_DECISION, message, nonRetryable: true });
  if (!input || typeof input !== 'object') throw invalid('A decision needs { stepId, digest, decision, approver }.');
  if (!Number.isInteger(input.stepId)) throw invalid('stepId must be an integer.');
  if (input.decision !== 'approve' && input.decision !== 'reject')
    throw invalid('decision must be "approve" or "reject".');
  if (
    typeof input.approver !== 'string' ||
    !input.approver.trim() ||
    input.approver.length > DECISION_LIMITS.approverLength
  ) {
    throw invalid(`approver must be a non-empty string of at most ${DECISION_LIMITS.approverLength} characters.`);
  }
  if (input.approverIdentity !== undefined && !isIdentity(input.approverIdentity)) {
    throw invalid(
      `approverIdentity must be { subject, issuer?, clientId? } of strings of at most ${DECISION_LIMITS.approverLength} characters.`,
    );
  }
  if (
    input.reason !== undefined &&
    (typeof input.reason !== 'string' || input.reason.length > DECISION_LIMITS.reasonLength)
  ) {
    throw invalid(`reason must be a string of at most ${DECISION_LIMITS.reasonLength} characters.`);
  }
  if (input.decision === 'reject' && !input.reason?.trim())
    throw invalid('A rejection needs a reason (the model reads it).');
  checkEditShape(input);
  const waiting = gate.waiting.get(input.stepId);
  const step = waiting?.step ?? gate.state.steps.find((s) => s.stepId === input.stepId);
  if (waiting?.decision || (!waiting && step?.approval?.decision)) {
    const decided = waiting?.decision ?? step?.approval;
    const what = 'decision' in (decided ?? {}) ? (decided as { decision: string }).decision : 'decided';
    throw ApplicationFailure.create({
      type: APPROVAL_REFUSAL_CODES.ALREADY_DECIDED,
      message: `Step ${input.stepId} (${step?.tool}) was already decided: ${what}. A decision is taken once.`,
      nonRetryable: true,
    });
  }
  if (!waiting) {
    throw ApplicationFailure.create({
      type: APPROVAL_REFUSAL_CODES.UNKNOWN_STEP,
      message: step
        ? `Step ${input.stepId} (${step.tool}) is not waiting for approval (it is ${step.status}).`
        : `Run ${gate.workflowId} has no step ${input.stepId} waiting for approval.`,
      nonRetryable: true,
    });
  }
  if (input.digest !== waiting.digest) {
    throw ApplicationFailure.create({
      type: APPROVAL_REFUSAL_CODES.DIGEST_MISMATCH,
      message: `The digest ${String(input.digest)} is not the one of step ${input.stepId}'s arguments (${waiting.digest}): review the arguments again.`,
      nonRetryable: true,
    });
  }
}

/**
 * The update's handler: a plain decision is taken at once ({@link applyDecision}); one with edited arguments once
 * the worker validated them (approval-edits.ts; invalid ones refuse the update and the call keeps waiting).
 */
export function decide(
  gate: ApprovalGate,
  input: ApprovalDecisionInput,
): ApprovalDecisionResult | Promise<ApprovalDecisionResult> {
  if (!editsArguments(input)) return applyDecision(gate, input);
  const tool = gate.waiting.get(input.stepId)?.step.tool ?? '';
  return reviewEdit(tool, input.arguments).then((edit) => applyDecision(gate, input, edit));
}

/** Records the decision the waiting call then reads (with the edited arguments the worker validated, if any). */
export function applyDecision(
  gate: ApprovalGate,
  input: ApprovalDecisionInput,
  edit?: ApprovedEdit,
): ApprovalDecisionResult {
  const waiting = gate.waiting.get(input.stepId);
  if (!waiting || waiting.decision) {
    throw ApplicationFailure.create({
      type: APPROVAL_REFUSAL_CODES.ALREADY_DECIDED,
      message: `Step ${input.stepId} is no longer waiting for a decision.`,
      nonRetryable: true,
    });
  }
  const decision: Decision = {
    decision: input.decision === 'approve' ? 'approved' : 'rejected',
    approver: input.approver.trim(),
    ...(input.approverIdentity ? { approverIdentity: identityRecord(input.approverIdentity) } : {}),
    ...(input.reason?.trim() ? { reason: input.reason.trim() } : {}),
    decidedAt: Date.now(),
    ...(edit ? { edit } : {}),
  };
  waiting.decision = decision;
  const { edit: _edit, ...decided } = decision;
  return {
    workflowId: gate.workflowId,
    stepId: input.stepId,
    tool: waiting.step.tool,
    digest: waiting.digest,
    ...decided,
    ...(edit ? { editedArguments: edit.arguments, editedDigest: edit.digest } : {}),
  };
}

function rejection(step: StepRecord, tool: string, timeoutMs: number): ToolErrorObservation {
  const approval = step.approval!;
  if (approval.decision === 'timed_out') {
    return {
      status: 'error',
      code: TOOL_ERROR_CODES.APPROVAL_TIMEOUT,
      message: `Nobody approved the call of "${tool}" within ${Math.round(timeoutMs / 1000)} s; it counts as rejected and nothing was run.`,
      hint: 'Do not repeat the call; tell the user it needs a human decision.',
      retryable: false,
      attempts: 0,
    };
  }
  return {
    status: 'error',
    code: TOOL_ERROR_CODES.APPROVAL_REJECTED,
    message: `${approval.decidedBy} rejected the call of "${tool}": ${approval.reason ?? 'no reason given'}. Nothing was run.`,
    hint: 'Do not repeat the call; take the reason into account, change the plan or ask the user.',
    retryable: false,
    attempts: 0,
  };
}

function unavailable(tool: string, what: string): ToolErrorObservation {
  return {
    status: 'error',
    code: TOOL_ERROR_CODES.UNAVAILABLE,
    message: `"${tool}" needs approval, but ${what}; nothing was run.`,
    hint: 'Try again later.',
    retryable: true,
    attempts: 0,
  };
}

function writeAudit(step: StepRecord, completion: Partial<ApprovalAuditRecord>): Promise<void> {
  const approval = step.approval!;
  return recordApprovalAudit({
    idempotencyKey: step.idempotencyKey,
    // The key carries the first run id too (`${workflowId}/${firstExecutionRunId}/${stepId}`): not a workflow id.
    workflowId: workflowInfo().workflowId,
    stepId: step.stepId,
    tool: step.tool,
    argumentsDigest: approval.digest,
    arguments: approval.arguments,
    requestedAt: approval.requestedAt,
    deadline: approval.deadline,
    ...(approval.decision ? { decision: approval.decision } : {}),
    ...(approval.decidedBy !== undefined ? { decidedBy: approval.decidedBy } : {}),
    ...(approval.decidedByIdentity !== undefined ? { decidedByIdentity: approval.decidedByIdentity } : {}),
    ...(approval.reason !== undefined ? { reason: approval.reason } : {}),
    ...(approval.decidedAt !== undefined ? { decidedAt: approval.decidedAt } : {}),
    ...(approval.editedDigest !== undefined
      ? { editedArguments: approval.editedArguments, editedArgumentsDigest: approval.editedDigest }
      : {}),
    ...completion,
  });
}

function warn(gate: ApprovalGate, message: string): void {
  if (!gate.state.policyWarnings.includes(message)) gate.state.policyWarnings.push(message);
}

/** Whether a value is an identity of bounded strings (`{ subject, issuer?, clientId? }`). */
function isIdentity(value: unknown): value is CallerIdentity {
  if (!value || typeof value !== 'object') return false;
  const { subject, issuer, clientId } = value as Record<string, unknown>;
  const fits = (field: unknown) => typeof field === 'string' && field.length <= DECISION_LIMITS.approverLength;
  return fits(subject) && (issuer === undefined || fits(issuer)) && (clientId === undefined || fits(clientId));
}
