import { CancellationScope, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { AgentRunState, StepRecord } from '../contract/agent-run-types';
import { DurableToolsError } from '../contract/durable-tools-error';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { ENGINE_ACTIVITY_OPTIONS } from './agent-run-defaults';
import { newApprovalGate, type ApprovalGate } from './approval-gate';
import { joinApprovalDesk } from './approval-desk';
import { newRunState } from './run-loop-state';

/*
 * What durable tool calls from a user's own workflow share within one workflow execution: the keys' owner, the
 * call counter, the tool catalog (read once, recorded) and the gate of the calls that need approval. Kept on the
 * workflow's global object, which is the execution's own (see SCOPE below).
 */

interface CatalogActivities {
  describeTools(names?: readonly string[]): Promise<ToolCatalogEntry[]>;
}

const { describeTools } = proxyActivities<CatalogActivities>({
  ...ENGINE_ACTIVITY_OPTIONS.describeTools,
  summary: 'tool catalog',
});

/** How many records of plain calls the `getRunState` query keeps (calls still open are always kept). */
const KEPT_CALL_RECORDS = 50;

/** The call scope of this workflow execution. */
export interface CallScope {
  /** The owner of the calls' keys and stored data: `${workflowId}/${firstExecutionRunId}`. */
  runKey: string;
  /**
   * What every generated call id starts with: nothing in the chain's first run, `${continuedFromExecutionRunId}/`
   * in a run that continued as new (or a retry or cron run), so no two runs of the chain share a key.
   */
  callIdPrefix: string;
  /** Calls numbered so far in this execution. */
  count: number;
  catalog?: Promise<ReadonlyMap<string, ToolCatalogEntry>>;
  /** The plain calls as the `getRunState` query shows them (approvals read them there). */
  state: AgentRunState;
  /** The gate of plain calls, once one needed it. */
  gate?: ApprovalGate;
}

/**
 * Where the scope lives: on the workflow's global object, which the SDK gives each workflow execution its own copy
 * of. Not in a module variable: SDKs before 1.2x with a reused V8 context share module state between the executions
 * of a worker, and a second workflow would then number its calls under the first one's keys.
 */
const SCOPE = Symbol.for('durable-tools.callScope');

/** This execution's slot for {@link SCOPE}. */
function executionGlobals(): { [SCOPE]?: CallScope } {
  return globalThis as { [SCOPE]?: CallScope };
}

/** The call scope of this workflow execution (created on first use). */
export function callScope(): CallScope {
  const globals = executionGlobals();
  const existing = globals[SCOPE];
  if (existing) return existing;
  const { workflowId, firstExecutionRunId, continuedFromExecutionRunId, workflowType } = workflowInfo();
  const runKey = `${workflowId}/${firstExecutionRunId}`;
  const scope: CallScope = {
    runKey,
    callIdPrefix: continuedFromExecutionRunId ? `${continuedFromExecutionRunId}/` : '',
    count: 0,
    state: newRunState(workflowId, `Tool calls of workflow ${workflowType}`, runKey),
  };
  globals[SCOPE] = scope;
  return scope;
}

/** A numbered call of this execution: its number (the step an approval names) and its call id. */
export interface NumberedCall {
  number: number;
  callId: string;
}

/**
 * Numbers the next call of this execution. Its id is the number (prefixed in a continued run, see
 * {@link CallScope.callIdPrefix}) unless the caller gives its own, which must not look like a generated one.
 */
export function numberCall(current: CallScope, ownCallId?: string): NumberedCall {
  current.count += 1;
  current.state.stepCount = current.count;
  if (ownCallId === undefined) return { number: current.count, callId: `${current.callIdPrefix}${current.count}` };
  checkOwnCallId(ownCallId);
  return { number: current.count, callId: ownCallId };
}

/** The key of a call: `${workflowId}/${firstExecutionRunId}/${callId}`. */
export function callKey(current: Pick<CallScope, 'runKey'>, callId: string): string {
  return `${current.runKey}/${callId}`;
}

/**
 * Refuses a call id of the caller's own that could meet a generated one (digits, or a run id and digits) or
 * that is not a plain word. Thrown in workflow code, it fails the workflow task: a bug to fix, not a tool failure.
 */
export function checkOwnCallId(callId: string): void {
  if (typeof callId !== 'string' || !/^[A-Za-z0-9_.:-]{1,128}$/.test(callId) || /^\d+$/.test(callId)) {
    throw new DurableToolsError(
      `callId ${JSON.stringify(callId)} is not allowed: use 1-128 letters, digits, "_", ".", ":" or "-", not digits only (those are the generated ids).`,
      'INVALID_CALL_ID',
    );
  }
}

/**
 * The worker's tool catalog, read once per workflow execution with the engine's `describeTools` activity
 * (recorded in history, so a replay sees the catalog the calls saw). Read outside the caller's cancellation
 * scope: calls waiting for the same read do not fail because the first caller was cancelled.
 */
export function toolCatalog(current: CallScope): Promise<ReadonlyMap<string, ToolCatalogEntry>> {
  current.catalog ??= CancellationScope.nonCancellable(() => describeTools()).then(
    (entries) => new Map(entries.map((entry) => [entry.name, entry])),
    (error: unknown) => {
      current.catalog = undefined;
      throw error;
    },
  );
  return current.catalog;
}

/**
 * The gate of plain calls, joined to the workflow's approval desk on first use. `track`: from now on, keep the
 * `DurableAwaitingApproval` search attribute up to date.
 */
export function callGate(current: CallScope, track = false): ApprovalGate {
  if (current.gate) {
    if (track) current.gate.track = true;
    return current.gate;
  }
  const gate = newApprovalGate(current.state.workflowId, current.state, undefined, track);
  joinApprovalDesk(gate, () => current.state);
  current.gate = gate;
  return gate;
}

/** Keeps a call's record for the query; the oldest settled records go beyond {@link KEPT_CALL_RECORDS}. */
export function recordCall(current: CallScope, step: StepRecord): void {
  const { steps } = current.state;
  steps.push(step);
  while (steps.length > KEPT_CALL_RECORDS) {
    const settled = steps.findIndex((s) => s.status !== 'awaiting_approval' && s.status !== 'running');
    if (settled < 0) break;
    steps.splice(settled, 1);
  }
}
