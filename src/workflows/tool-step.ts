import { isCancellation, scheduleActivity, scheduleLocalActivity } from '@temporalio/workflow';
import type { ToolActivityInput, ToolActivityResult } from '../contract/tool-activity-types';
import type { ModelToolCall } from '../contract/model-types';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import type { PendingCompensation, StepRecord } from '../contract/agent-run-types';
import { passApprovalGate, recordApprovalOutcome, type GateResult } from './approval-gate';
import { isIrreversibleForward } from './effect-tiers';
import {
  failureMayHaveHadEffect,
  observationFromFailure,
  readToolFailureDetails,
  TOOL_ERROR_CODES,
  type ToolErrorObservation,
} from '../contract/activity-protocol';
import { boundObservation } from '../contract/bound-observation';
import { redactDeep } from '../contract/sensitive-arguments';
import { PAYLOAD_LIMITS } from '../contract/payload-limits';
import { stepKey } from './run-ownership';
import { argumentsTooLarge, compensationArguments, compensationOutput } from './run-budget';
import { prepareCall, type PreparedCall } from './prepared-call';
import { localToolOptions, toolActivityOptions } from './tool-call-options';
import { callAgentTool } from './sub-agent-call';
import type { CallExecutor, StartedCall, StepContext } from './run-types';
import { recordUsedUp, takeRecordedAnswer, type DryRunRecord } from './dry-run-step';
import { successObservation } from './step-observation';
import { toolNameOf } from './turn-reading';

/**
 * Runs one tool call of the model through the gates, then as an activity named after the tool:
 * - visibility: an unknown or hidden tool is refused and nothing runs;
 * - effect tiers: a compensable call after an unguarded irreversible one is refused;
 * - approval: a call that needs it waits for a decision bound to its arguments' digest (approval-gate.ts);
 * - the pending compensation is registered BEFORE the call and dropped only when the call provably had
 *   no effect.
 * Every outcome becomes the step's observation; only cancellation escapes.
 */
export async function runToolStep(call: ModelToolCall, ctx: StepContext): Promise<StepRecord> {
  const opened = openCall(call, ctx);
  if ('refused' in opened) return opened.refused;
  const { step, entry, prepared } = opened;
  if (ctx.dryRun) {
    // A dry run asks nobody for approval and owes no compensation: no call with effects runs in it.
    const gate = { kind: 'open' } as const;
    return await callTool({ step, entry, prepared, gate, compensation: undefined, storeArguments: false }, ctx);
  }
  const gate = await passApprovalGate(step, entry, ctx.approvals);
  if (gate.kind === 'refused') return refuse(step, gate.observation);
  // Approved with edits: the call (and its compensation) runs with the arguments the approver approved.
  const approved =
    gate.kind === 'approved' && gate.arguments !== undefined ? prepareCall(gate.arguments, entry) : prepared;
  await callTool({ step, entry, prepared: approved, gate, ...registerCompensation(step, entry, approved, ctx) }, ctx);
  if (gate.kind === 'approved') await recordApprovalOutcome(step, ctx.approvals);
  return step;
}

/**
 * A call that already ran (a turn asked ahead ran it, fast-path-calls.ts), settled at once as
 * {@link runToolStep} settles it — the same step, checks, compensation and observation — without a promise.
 * `take` gives its result once the step runs; the caller has checked that the call opens at once (no approval).
 */
export function settleAtOnce(
  call: ModelToolCall,
  ctx: StepContext,
  take: (step: StepRecord) => ToolActivityResult,
): StepRecord {
  const opened = openCall(call, ctx);
  if ('refused' in opened) return opened.refused;
  const { step, entry, prepared } = opened;
  const running: RunningCall = {
    ...opened,
    gate: { kind: 'open' },
    ...registerCompensation(step, entry, prepared, ctx),
  };
  markRunning(step);
  return settleCall(running, { result: take(step) }, ctx);
}

/**
 * Opens the call and checks it before anyone is asked to approve it: its step settled as refused (an unknown or
 * hidden tool, arguments too large, the effect tiers), or the step, its tool and its prepared arguments.
 */
function openCall(
  call: ModelToolCall,
  ctx: StepContext,
): { refused: StepRecord } | { step: StepRecord; entry: ToolCatalogEntry; prepared: PreparedCall } {
  const { step, entry, prepared } = openStep(call, ctx);
  if (!entry) return { refused: refuse(step, unknownTool(step.tool, [...ctx.visible])) };
  const refusal = refusalBeforeApproval(entry, prepared, ctx);
  return refusal ? { refused: refuse(step, refusal) } : { step, entry, prepared };
}

/**
 * Opens the call's step: its id, its record in the run state (before anything is awaited: a background call
 * finds its record as the last one), the tool it names if the run has it, and its prepared arguments.
 */
function openStep(
  call: ModelToolCall,
  ctx: StepContext,
): { step: StepRecord; entry: ToolCatalogEntry | undefined; prepared: PreparedCall } {
  const { state } = ctx;
  state.stepCount += 1;
  const stepId = state.stepCount;
  const name = toolNameOf(call);
  const entry = ctx.visible.has(name) ? ctx.catalog.get(name) : undefined;
  // Fields the schema marks sensitive: never in the step's record, its summary or what the model reads back.
  const prepared = prepareCall(call?.arguments, entry);
  const step: StepRecord = {
    stepId,
    turn: state.turns,
    toolCallId: typeof call?.id === 'string' ? call.id : `step_${stepId}`,
    tool: name,
    arguments: prepared.recorded,
    idempotencyKey: stepKey(ctx.scope, stepId),
    status: 'pending',
  };
  state.steps.push(step);
  return { step, entry, prepared };
}

/** Why the call is refused before anyone is asked to approve it: arguments too large, or the effect tiers. */
function refusalBeforeApproval(
  entry: ToolCatalogEntry,
  prepared: PreparedCall,
  ctx: StepContext,
): ToolErrorObservation | undefined {
  // Measured on what the model sent, before anything is scheduled or stored.
  const tooLarge = argumentsTooLarge(prepared.raw, entry, prepared.bytes);
  if (tooLarge) return tooLarge;
  if (entry.effect !== 'compensable' || !ctx.irreversibleDone) return undefined;
  return {
    status: 'error',
    code: TOOL_ERROR_CODES.POLICY_VIOLATION,
    message: `"${entry.name}" can be undone, but an irreversible step already ran in this run; nothing was executed.`,
    hint: 'Irreversible tools must come after every compensable step. Finish the run or use a read-only tool.',
    retryable: false,
    attempts: 0,
  };
}

/** What a compensation owes to a call: registered before the call runs, when its tool has an undo tool. */
interface OwedCompensation {
  compensation: PendingCompensation | undefined;
  /** Whether the forward activity stores the arguments for the undo tool (they are too large to carry). */
  storeArguments: boolean;
}

/**
 * Registers the call's compensation before it runs. Large arguments travel to the undo tool by reference, so
 * the carried-over compensations stay small.
 */
function registerCompensation(
  step: StepRecord,
  entry: ToolCatalogEntry,
  prepared: PreparedCall,
  ctx: StepContext,
): OwedCompensation {
  if (!entry.undo) return { compensation: undefined, storeArguments: false };
  const carried = compensationArguments(prepared.raw, step.idempotencyKey, prepared.bytes);
  const compensation: PendingCompensation = {
    stepId: step.stepId,
    tool: entry.name,
    undo: entry.undo,
    arguments: carried.value,
    idempotencyKey: step.idempotencyKey,
  };
  ctx.pending.push(compensation);
  step.undo = entry.undo;
  return { compensation, storeArguments: carried.storeArguments };
}

/** A call past its gates, about to run as an activity. */
interface RunningCall extends OwedCompensation {
  step: StepRecord;
  entry: ToolCatalogEntry;
  prepared: PreparedCall;
  gate: Exclude<GateResult, { kind: 'refused' }>;
}

/** Runs the call as the activity named after its tool and settles its step; only cancellation escapes. */
async function callTool(call: RunningCall, ctx: StepContext): Promise<StepRecord> {
  markRunning(call.step);
  try {
    const started = startCall(call, ctx);
    // A call that already ran (fast-path-calls.ts) is taken as it is: nothing is scheduled, nothing awaited.
    const result = 'ran' in started ? started.ran : await started.running;
    return settleCall(call, { result }, ctx);
  } catch (error) {
    return settleCall(call, { error }, ctx);
  }
}

/** Starts the call: an agent tool's child, or its tool's activity as the generation's executor runs it. */
function startCall(call: RunningCall, ctx: StepContext): StartedCall {
  const { step, entry, prepared, gate } = call;
  const input: ToolActivityInput = {
    arguments: prepared.raw,
    idempotencyKey: step.idempotencyKey,
    stepId: step.stepId,
    ...(ctx.scope.runKey !== undefined ? { runKey: ctx.scope.runKey } : {}),
    ...(call.storeArguments ? { storeArguments: call.storeArguments } : {}),
    ...(gate.kind === 'approved' ? { approvedDigest: gate.digest } : {}),
    // The run's own tools bound its child's grant (run-authority.ts): a sub-agent never calls more than its parent.
    ...(entry.agent && ctx.subAgents?.input.allowedTools ? { runTools: [...ctx.subAgents.input.allowedTools] } : {}),
  };
  // An agent tool's call in a dry run starts no child: the dry run's executor (dry-run-calls.ts) sends it to the
  // dry activity, which answers it from the record or refuses it.
  if (entry.agent && !ctx.dryRun) return { running: callAgentTool(step, entry, input, prepared.redacted, ctx) };
  return ctx.calls.start({
    entry,
    stepId: step.stepId,
    activityType: entry.name,
    input,
    redacted: prepared.redacted,
    summarized: {},
    approved: gate.kind === 'approved',
  });
}

/**
 * The regular way calls run: each as the activity named after its tool, a local activity for a tool declared
 * `execution: 'local'`.
 */
export const activityCalls: CallExecutor = {
  start({ entry, activityType, input, redacted, summarized }) {
    if (entry.execution === 'local') {
      const options = localToolOptions(entry, redacted, summarized);
      return { running: scheduleLocalActivity<ToolActivityResult>(activityType, [input], options) };
    }
    const options = toolActivityOptions(entry, redacted, summarized);
    return { running: scheduleActivity<ToolActivityResult>(activityType, [input], options) };
  },
};

/**
 * The one way a call's step is settled, whether the workflow ran the call or it ran ahead (CallExecutor): its
 * outcome becomes the step's observation, and the step ends. A cancellation escapes (its step recorded).
 */
function settleCall(
  call: RunningCall,
  outcome: { result: ToolActivityResult } | { error: unknown },
  ctx: StepContext,
): StepRecord {
  if ('error' in outcome) settleFailure(call, outcome.error, ctx);
  else settleSuccess(call, outcome.result, ctx);
  call.step.endedAt = Date.now();
  return call.step;
}

function markRunning(step: StepRecord): void {
  step.status = 'running';
  step.startedAt = Date.now();
}

/** The call returned: its output, redacted and within the tool output budget, is the step's observation. */
function settleSuccess(call: RunningCall, result: ToolActivityResult, ctx: StepContext): void {
  const { step, entry, compensation } = call;
  if (typeof result.argumentsDigest === 'string') step.argumentsDigest = result.argumentsDigest;
  if (ctx.dryRun && result.dryRunAnswer) return settleFromRecord(call, result, ctx.dryRun, ctx);
  if (ctx.dryRun) step.dryRun = { answer: 'ran' };
  step.status = 'succeeded';
  step.attempts = result.attempt;
  step.observation = successObservation(result, call.prepared.secrets);
  if (compensation) compensation.output = compensationOutput(result.output, step.idempotencyKey);
  // An irreversible call a human approved may come before compensable steps; one that ran unapproved may not.
  if (call.gate.kind !== 'approved' && isIrreversibleForward(entry, ctx.undoTools)) ctx.irreversibleDone = true;
}

/**
 * A call of a dry run that the activity matched to a recorded call: the source's recorded observation is the
 * step's (an error stays an error); the tool did not run.
 */
function settleFromRecord(call: RunningCall, result: ToolActivityResult, record: DryRunRecord, ctx: StepContext): void {
  const { step, entry } = call;
  step.attempts = result.attempt;
  const answer = takeRecordedAnswer(record, entry.name, result.dryRunAnswer!.sourceStep, result.argumentsDigest);
  if (!answer) {
    step.dryRun = { answer: 'refused' };
    refuse(step, recordUsedUp(entry.name));
    return;
  }
  step.dryRun = { answer: 'recorded', sourceStep: answer.sourceStep };
  step.status = answer.observation.status === 'ok' ? 'succeeded' : 'failed';
  step.observation = boundObservation(answer.observation, PAYLOAD_LIMITS.maxToolOutputBytes);
  // As in the source: an irreversible call a human approved may come before compensable steps.
  if (answer.observation.status === 'ok' && !answer.approved && isIrreversibleForward(entry, ctx.undoTools)) {
    ctx.irreversibleDone = true;
  }
}

/**
 * The call failed: its error, redacted, is the step's observation; the compensation is dropped when the call
 * provably had no effect. A cancellation keeps what the call reported and goes on.
 */
function settleFailure(call: RunningCall, error: unknown, ctx: StepContext): void {
  const { step, entry, compensation } = call;
  const observation = redactDeep(
    observationFromFailure(error, entry.name, entry.retry.maximumAttempts),
    call.prepared.secrets,
  );
  step.status = 'failed';
  const { facts } = readToolFailureDetails(error);
  if (facts?.argumentsDigest !== undefined) step.argumentsDigest = facts.argumentsDigest;
  if (ctx.dryRun) markDryFailure(step, observation, entry, ctx.dryRun);
  if (isCancellation(error)) {
    // The run is being cancelled: keep what the call reported (the tool's own error, if it also failed).
    step.observation = observation;
    step.endedAt = Date.now();
    throw error;
  }
  step.observation = boundObservation(observation, PAYLOAD_LIMITS.maxToolOutputBytes) as ToolErrorObservation;
  step.attempts = step.observation.attempts;
  if (compensation && !failureMayHaveHadEffect(error)) {
    ctx.pending.splice(ctx.pending.indexOf(compensation), 1);
    delete step.undo;
  }
}

/** How a failed call of a dry run was answered: refused for want of a record, or a read-only call that ran. */
function markDryFailure(
  step: StepRecord,
  observation: ToolErrorObservation,
  entry: ToolCatalogEntry,
  record: DryRunRecord,
): void {
  if (observation.code === TOOL_ERROR_CODES.DRY_RUN_NO_RECORD) step.dryRun = { answer: 'refused' };
  else if (entry.effect === 'read-only' && record.plan.readOnlyTools === 'run') step.dryRun = { answer: 'ran' };
}

function refuse(step: StepRecord, observation: ToolErrorObservation): StepRecord {
  step.status = 'failed';
  step.observation = boundObservation(observation, PAYLOAD_LIMITS.maxToolOutputBytes) as ToolErrorObservation;
  step.attempts = 0;
  return step;
}

function unknownTool(name: string, known: string[]): ToolErrorObservation {
  return {
    status: 'error',
    code: TOOL_ERROR_CODES.UNKNOWN_TOOL,
    message: `There is no tool named ${JSON.stringify(name)} in this run; nothing was executed.`,
    hint: known.length > 0 ? `Use one of: ${known.join(', ')}.` : 'This run has no tools; answer directly.',
    retryable: false,
    attempts: 0,
  };
}
