import {
  ActivityCancellationType,
  isCancellation,
  scheduleActivity,
  scheduleLocalActivity,
  type ActivityOptions,
  type LocalActivityOptions,
} from '@temporalio/workflow';
import type { ToolActivityInput, ToolActivityResult } from '../contract/tool-activity-types';
import type { ModelToolCall } from '../contract/model-types';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { SUMMARY_MAX_LENGTH, TOOL_ATTEMPT_HEADROOM, TOOL_HEARTBEAT_TIMEOUT_MS } from './agent-run-defaults';
import type { AgentRunState, PendingCompensation, StepRecord } from '../contract/agent-run-types';
import { passApprovalGate, recordApprovalOutcome, type ApprovalGate } from './approval-gate';
import { isIrreversibleForward } from './effect-tiers';
import {
  failureMayHaveHadEffect,
  observationFromFailure,
  TOOL_ACTIVITY_NON_RETRYABLE_TYPES,
  TOOL_ERROR_CODES,
  type ToolErrorObservation,
} from '../contract/activity-protocol';
import { boundObservation } from '../contract/bound-observation';
import { redactArguments, redactDeep, sensitiveValues } from '../contract/sensitive-arguments';
import { PAYLOAD_LIMITS } from '../contract/payload-limits';
import { stepKey, type RunScope } from './run-ownership';
import { argumentsTooLarge, compensationArguments, compensationOutput, recordedArguments } from './run-budget';

/** What a step needs from its run. */
export interface StepContext {
  /** The run's keys and owner: `${workflowId}/${firstExecutionRunId}/${stepId}` (run-ownership.ts). */
  scope: RunScope;
  state: AgentRunState;
  /** Every tool of the worker (undo tools included). */
  catalog: ReadonlyMap<string, ToolCatalogEntry>;
  /** Tools the model may call in this run. */
  visible: ReadonlySet<string>;
  undoTools: ReadonlySet<string>;
  /** Compensations owed, oldest first. */
  pending: PendingCompensation[];
  irreversibleDone: boolean;
  /** The run's approval gate. */
  approvals: ApprovalGate;
}

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
  const { state } = ctx;
  state.stepCount += 1;
  const stepId = state.stepCount;
  const name = typeof call?.name === 'string' ? call.name : String(call?.name);
  const step: StepRecord = {
    stepId,
    turn: state.turns,
    toolCallId: typeof call?.id === 'string' ? call.id : `step_${stepId}`,
    tool: name,
    arguments: recordedArguments(call?.arguments),
    idempotencyKey: stepKey(ctx.scope, stepId),
    status: 'pending',
  };
  state.steps.push(step);

  const entry = ctx.visible.has(name) ? ctx.catalog.get(name) : undefined;
  if (!entry) return refuse(step, unknownTool(name, [...ctx.visible]));
  // Fields the schema marks sensitive: never in the step's record, its summary or what the model reads back.
  const secrets = sensitiveValues(call.arguments, entry.inputSchema);
  step.arguments = recordedArguments(redactArguments(call?.arguments, entry.inputSchema));
  // Measured on what the model sent, before anything is scheduled or stored.
  const tooLarge = argumentsTooLarge(call.arguments, entry);
  if (tooLarge) return refuse(step, tooLarge);
  if (entry.effect === 'compensable' && ctx.irreversibleDone) {
    return refuse(step, {
      status: 'error',
      code: TOOL_ERROR_CODES.POLICY_VIOLATION,
      message: `"${name}" can be undone, but an irreversible step already ran in this run; nothing was executed.`,
      hint: 'Irreversible tools must come after every compensable step. Finish the run or use a read-only tool.',
      retryable: false,
      attempts: 0,
    });
  }

  const gate = await passApprovalGate(step, entry, ctx.approvals);
  if (gate.kind === 'refused') return refuse(step, gate.observation);

  let compensation: PendingCompensation | undefined;
  let storeArguments = false;
  if (entry.undo) {
    // Large arguments travel to the undo tool by reference, so the carried-over compensations stay small.
    const carried = compensationArguments(call.arguments, step.idempotencyKey);
    storeArguments = carried.storeArguments;
    compensation = {
      stepId,
      tool: name,
      undo: entry.undo,
      arguments: carried.value,
      idempotencyKey: step.idempotencyKey,
    };
    ctx.pending.push(compensation);
    step.undo = entry.undo;
  }
  step.status = 'running';
  step.startedAt = Date.now();
  try {
    const input: ToolActivityInput = {
      arguments: call.arguments,
      idempotencyKey: step.idempotencyKey,
      stepId,
      ...(ctx.scope.runKey !== undefined ? { runKey: ctx.scope.runKey } : {}),
      ...(storeArguments ? { storeArguments } : {}),
      ...(gate.kind === 'approved' ? { approvedDigest: gate.digest } : {}),
    };
    const result =
      entry.execution === 'local'
        ? await scheduleLocalActivity<ToolActivityResult>(entry.name, [input], localToolOptions(entry, call.arguments))
        : await scheduleActivity<ToolActivityResult>(entry.name, [input], toolActivityOptions(entry, call.arguments));
    step.status = 'succeeded';
    step.attempts = result.attempt;
    step.observation = boundObservation(
      { status: 'ok', output: redactDeep(result.output, secrets), ...(result.replayed ? { replayed: true } : {}) },
      PAYLOAD_LIMITS.maxToolOutputBytes,
      'The output was larger than any tool may return inline.',
    );
    if (compensation) compensation.output = compensationOutput(result.output, step.idempotencyKey);
    // An irreversible call a human approved may come before compensable steps; one that ran unapproved may not.
    if (gate.kind !== 'approved' && isIrreversibleForward(entry, ctx.undoTools)) ctx.irreversibleDone = true;
  } catch (error) {
    if (isCancellation(error)) {
      // The run is being cancelled: keep what the call reported (the tool's own error, if it also failed).
      step.status = 'failed';
      step.observation = redactDeep(observationFromFailure(error, entry.name, entry.retry.maximumAttempts), secrets);
      step.endedAt = Date.now();
      throw error;
    }
    step.status = 'failed';
    step.observation = boundObservation(
      redactDeep(observationFromFailure(error, entry.name, entry.retry.maximumAttempts), secrets),
      PAYLOAD_LIMITS.maxToolOutputBytes,
    ) as ToolErrorObservation;
    step.attempts = step.observation.attempts;
    if (compensation && !failureMayHaveHadEffect(error)) {
      ctx.pending.splice(ctx.pending.indexOf(compensation), 1);
      delete step.undo;
    }
  }
  step.endedAt = Date.now();
  if (gate.kind === 'approved') await recordApprovalOutcome(step, ctx.approvals);
  return step;
}

/** Options of a tool call scheduled as a regular activity. */
function toolActivityOptions(entry: ToolCatalogEntry, args: unknown): ActivityOptions {
  return {
    summary: summarize(entry.name, redactArguments(args, entry.inputSchema)),
    startToCloseTimeout: entry.timeoutMs,
    ...heartbeatTimeout(entry),
    scheduleToCloseTimeout: entry.retry.totalDeadlineMs,
    // Wait for a cancelled call to really stop, so a compensation never races its forward call. A call
    // waiting for its callback runs nowhere and would never hear of the cancellation: it is only requested.
    cancellationType:
      entry.asyncJob?.completion === 'callback'
        ? ActivityCancellationType.TRY_CANCEL
        : ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: {
      // The wrapper enforces the tool's own maximum over the attempts that really ran it.
      maximumAttempts: entry.retry.maximumAttempts + TOOL_ATTEMPT_HEADROOM,
      initialInterval: entry.retry.initialDelayMs,
      maximumInterval: entry.retry.maxDelayMs,
      backoffCoefficient: 2,
      // A tool missing on the worker fails at once instead of retrying.
      nonRetryableErrorTypes: [...TOOL_ACTIVITY_NON_RETRYABLE_TYPES],
    },
  };
}

/** A long call's own heartbeat timeout; the engine's for other tools whose attempts are longer than it. */
function heartbeatTimeout(entry: ToolCatalogEntry): Pick<ActivityOptions, 'heartbeatTimeout'> {
  // A call waiting for its callback has no worker to heartbeat: its attempt timeout bounds the wait.
  if (entry.asyncJob?.completion === 'callback') return {};
  if (entry.longCall) return { heartbeatTimeout: entry.longCall.heartbeatTimeoutMs };
  return entry.timeoutMs > TOOL_HEARTBEAT_TIMEOUT_MS ? { heartbeatTimeout: TOOL_HEARTBEAT_TIMEOUT_MS } : {};
}

/**
 * Options of a read-only tool declared `execution: 'local'`: no heartbeat timeout (local activities cannot
 * heartbeat) and no attempt headroom (the attempt number of a local activity is exact: the wrapper does not
 * count executions through heartbeat details).
 */
function localToolOptions(entry: ToolCatalogEntry, args: unknown): LocalActivityOptions {
  return {
    summary: summarize(entry.name, redactArguments(args, entry.inputSchema)),
    startToCloseTimeout: entry.timeoutMs,
    scheduleToCloseTimeout: entry.retry.totalDeadlineMs,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: {
      maximumAttempts: entry.retry.maximumAttempts,
      initialInterval: entry.retry.initialDelayMs,
      maximumInterval: entry.retry.maxDelayMs,
      backoffCoefficient: 2,
      nonRetryableErrorTypes: [...TOOL_ACTIVITY_NON_RETRYABLE_TYPES],
    },
  };
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

function summarize(tool: string, args: unknown): string {
  let text: string;
  try {
    text = typeof args === 'string' ? args : JSON.stringify(args ?? {});
  } catch {
    text = String(args);
  }
  const full = `${tool} ${text}`.replace(/\s+/g, ' ');
  return full.length > SUMMARY_MAX_LENGTH ? `${full.slice(0, SUMMARY_MAX_LENGTH - 1)}…` : full;
}
