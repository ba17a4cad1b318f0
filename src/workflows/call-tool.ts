import { isCancellation, scheduleActivity, scheduleLocalActivity } from '@temporalio/workflow';
import {
  failureMayHaveHadEffect,
  observationFromFailure,
  TOOL_ERROR_CODES,
  type ToolErrorObservation,
} from '../contract/activity-protocol';
import type { PendingCompensation, StepRecord } from '../contract/agent-run-types';
import { boundObservation } from '../contract/bound-observation';
import { PAYLOAD_LIMITS } from '../contract/payload-limits';
import { redactDeep } from '../contract/sensitive-arguments';
import type { ToolActivityInput, ToolActivityResult } from '../contract/tool-activity-types';
import { ToolCallFailure } from '../contract/tool-call-failure';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { passApprovalGate, recordApprovalOutcome, type GateResult } from './approval-gate';
import { prepareCall, type PreparedCall } from './prepared-call';
import { argumentsTooLarge, compensationArguments, compensationOutput } from './run-budget';
import { oweToolCompensation, type OwedToolCompensation } from './saga-scope';
import { localToolOptions, toolActivityOptions } from './tool-call-options';
import {
  callGate,
  callKey,
  callScope,
  numberCall,
  recordCall,
  toolCatalog,
  type CallScope,
} from './workflow-call-scope';

/** Options of one durable tool call from a workflow. */
export interface CallToolOptions {
  /**
   * The call's id within the workflow's key space, instead of the generated one (the call's number in this
   * execution, prefixed in a continued run). The key is `${workflowId}/${firstExecutionRunId}/${callId}`: give
   * the same id to the same call, and no id to two different calls. Letters, digits, `_ . : -`, not digits only.
   */
  callId?: string;
  /** The activity's summary in the Temporal UI (default: the tool and its redacted arguments). */
  summary?: string;
  /**
   * While a call waits for approval, keep the `DurableAwaitingApproval` search attribute up to date, so
   * `durable-tools pending` lists the workflow. Only when the namespace has it registered (an unregistered attribute
   * fails the workflow task); default false: `durable-tools approve <workflowId> <step>` works without it.
   */
  trackApprovalSearchAttribute?: boolean;
}

/**
 * Calls a tool of the worker durably from any workflow: the activity named after the tool, with the retry, timeout
 * and heartbeat options of its catalog entry, under the key `${workflowId}/${firstExecutionRunId}/${callId}`, so a
 * retried or replayed call never runs its effect twice, and a workflow id used again never reaches these keys. The
 * activity validates the arguments, claims the key, classifies failures (jitter, Retry-After) and stores large
 * outputs (an output above the tool's budget comes back as a `StoredOutputReference`: see
 * docs/own-workflows.md). A tool that needs approval waits for a decision first (`durable-tools approve
 * <workflowId> <step>`, the step being the call's number in this execution). Inside {@link withSaga}, a tool with
 * an undo tool registers its compensation before the call.
 *
 * @returns the tool's output.
 * @throws {@link ToolCallFailure} carrying the structured observation (code, message, hint, retryable, attempts)
 * when the call failed or was refused; Temporal's cancellation when the workflow (or scope) was cancelled.
 *
 * @example
 * ```ts
 * const weather = await callTool<{ tempC: number }>('get_weather', { city: 'Bern' });
 * ```
 */
export async function callTool<O = unknown>(name: string, args: unknown, options: CallToolOptions = {}): Promise<O> {
  const scope = callScope();
  const { number, callId } = numberCall(scope, options.callId);
  const key = callKey(scope, callId);
  const catalog = await toolCatalog(scope);
  const entry = catalog.get(name);
  const prepared = prepareCall(args, entry);
  const step: StepRecord = {
    stepId: number,
    turn: 0,
    toolCallId: callId,
    tool: name,
    arguments: prepared.recorded,
    idempotencyKey: key,
    status: 'pending',
  };
  recordCall(scope, step);
  if (!entry) return refuse(step, unknownTool(name));
  const refusal = refusalBeforeRunning(entry, prepared);
  if (refusal) return refuse(step, refusal);
  const gate = await passApprovalGate(step, entry, callGate(scope, options.trackApprovalSearchAttribute === true));
  if (gate.kind === 'refused') return refuse(step, gate.observation);
  try {
    const undo = entry.undo !== undefined ? catalog.get(entry.undo) : undefined;
    // Approved with edits: the call runs with the arguments the approver approved (approval-edits.ts).
    const approved = gate.kind === 'approved' && gate.arguments !== undefined ? prepareCall(gate.arguments, entry) : prepared;
    return (await runCall({ step, entry, undo, prepared: approved, gate }, scope, options)) as O;
  } finally {
    step.endedAt = Date.now();
    if (gate.kind === 'approved') await recordApprovalOutcome(step, callGate(scope));
  }
}

/** Why the call is refused before it runs: an agent tool, or arguments above the tool's limit. */
function refusalBeforeRunning(entry: ToolCatalogEntry, prepared: PreparedCall): ToolErrorObservation | undefined {
  if (entry.agent) {
    return {
      status: 'error',
      code: TOOL_ERROR_CODES.POLICY_VIOLATION,
      message: `"${entry.name}" is an agent tool; it runs as a sub-agent of an agent run, not as a call from a workflow. Nothing was executed.`,
      hint: 'Start the agent with runAgent, or as an agentRun child workflow.',
      retryable: false,
      attempts: 0,
    };
  }
  return argumentsTooLarge(prepared.raw, entry, prepared.bytes);
}

/** A call past its gate. */
interface OpenCall {
  step: StepRecord;
  entry: ToolCatalogEntry;
  /** The catalog entry of the tool's undo tool, when it has one. */
  undo: ToolCatalogEntry | undefined;
  prepared: PreparedCall;
  gate: Exclude<GateResult, { kind: 'refused' }>;
}

/** Runs the call as its tool's activity, with its compensation owed to the current saga; settles the step. */
async function runCall(call: OpenCall, scope: CallScope, options: CallToolOptions): Promise<unknown> {
  const { step, entry, prepared, gate } = call;
  const carried = entry.undo ? compensationArguments(prepared.raw, step.idempotencyKey, prepared.bytes) : undefined;
  const owed = carried ? oweCompensation(call, carried.value, scope) : undefined;
  const input: ToolActivityInput = {
    arguments: prepared.raw,
    idempotencyKey: step.idempotencyKey,
    stepId: step.stepId,
    runKey: scope.runKey,
    ...(owed && carried?.storeArguments ? { storeArguments: true } : {}),
    ...(gate.kind === 'approved' ? { approvedDigest: gate.digest } : {}),
  };
  step.status = 'running';
  step.startedAt = Date.now();
  let result: ToolActivityResult;
  try {
    result =
      entry.execution === 'local'
        ? await scheduleLocalActivity<ToolActivityResult>(entry.name, [input], {
            ...localToolOptions(entry, prepared.redacted),
            ...(options.summary !== undefined ? { summary: options.summary } : {}),
          })
        : await scheduleActivity<ToolActivityResult>(entry.name, [input], {
            ...toolActivityOptions(entry, prepared.redacted),
            ...(options.summary !== undefined ? { summary: options.summary } : {}),
          });
  } catch (error) {
    throw settleFailure(step, entry, prepared, owed, error);
  }
  step.status = 'succeeded';
  step.attempts = result.attempt;
  if (typeof result.argumentsDigest === 'string') step.argumentsDigest = result.argumentsDigest;
  step.observation = { status: 'ok', output: { $durableTools: 'omitted', note: 'The workflow has the output.' } };
  owed?.setOutput(compensationOutput(result.output, step.idempotencyKey));
  return result.output;
}

/** Registers the call's compensation in the current saga (none outside a saga) before the call runs. */
function oweCompensation(
  call: OpenCall,
  carriedArguments: unknown,
  scope: CallScope,
): OwedToolCompensation | undefined {
  const { step, entry } = call;
  const item: PendingCompensation = {
    stepId: step.stepId,
    tool: entry.name,
    undo: entry.undo!,
    arguments: carriedArguments,
    idempotencyKey: step.idempotencyKey,
  };
  const owed = oweToolCompensation(item, call.undo, scope.runKey);
  if (owed) step.undo = entry.undo;
  return owed;
}

/**
 * The call failed: the error to throw (a cancellation as it came, else a {@link ToolCallFailure} with the
 * redacted observation). The compensation is dropped when the call provably had no effect.
 */
function settleFailure(
  step: StepRecord,
  entry: ToolCatalogEntry,
  prepared: PreparedCall,
  owed: OwedToolCompensation | undefined,
  error: unknown,
): unknown {
  const observation = boundObservation(
    redactDeep(observationFromFailure(error, entry.name, entry.retry.maximumAttempts), prepared.secrets),
    PAYLOAD_LIMITS.maxToolOutputBytes,
  ) as ToolErrorObservation;
  step.status = 'failed';
  step.observation = observation;
  step.attempts = observation.attempts;
  if (owed && !failureMayHaveHadEffect(error)) {
    owed.drop();
    delete step.undo;
  }
  if (isCancellation(error)) return error;
  return new ToolCallFailure(
    observation,
    { tool: entry.name, idempotencyKey: step.idempotencyKey },
    error instanceof Error ? error : undefined,
  );
}

/** A call refused before it ran: its step fails with the observation, which the thrown failure carries. */
function refuse(step: StepRecord, observation: ToolErrorObservation): never {
  step.status = 'failed';
  step.observation = observation;
  step.attempts = 0;
  step.endedAt = Date.now();
  throw new ToolCallFailure(observation, { tool: step.tool, idempotencyKey: step.idempotencyKey });
}

function unknownTool(name: string): ToolErrorObservation {
  return {
    status: 'error',
    code: TOOL_ERROR_CODES.UNKNOWN_TOOL,
    message: `The worker has no tool named ${JSON.stringify(name)}; nothing was executed.`,
    hint: 'Register the tool on the worker that runs this workflow, or check the name.',
    retryable: false,
    attempts: 0,
  };
}
