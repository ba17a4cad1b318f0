import { isCancellation, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import { TOOL_ERROR_CODES, type ToolObservation } from '../contract/activity-protocol';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { AGENT_RUN_DEFAULTS, ENGINE_ACTIVITY_OPTIONS } from './agent-run-defaults';
import { getRunStateQuery } from '../contract/agent-run-messages';
import type { AgentRunState } from '../contract/agent-run-types';
import { modelVisibleTools, undoToolNames } from '../contract/tool-visibility';
import { createApprovalGate } from './approval-gate';
import { newRunState } from './run-loop-state';
import { compensate } from './saga';
import { runScope } from './run-ownership';
import type { StepContext } from './run-types';
import { activityCalls, runToolStep } from './tool-step';

const { describeTools } = proxyActivities<{ describeTools(names?: readonly string[]): Promise<ToolCatalogEntry[]> }>(
  ENGINE_ACTIVITY_OPTIONS.describeTools,
);

/** Input of {@link mcpToolCall}: one tool call an MCP client asked for. */
export interface McpToolCallInput {
  tool: string;
  /** The client's arguments, checked by the tool's guard on the worker. */
  arguments: unknown;
  /**
   * Mark the call in the `DurableAwaitingApproval` search attribute while it waits for a decision, so
   * `durable-tools pending` lists it (the MCP server sets it when the server knows the attribute).
   */
  trackApprovalSearchAttribute?: boolean;
}

/** What {@link mcpToolCall} returns: the observation a model would have seen, and the attempts it took. */
export interface McpToolCallResult {
  tool: string;
  observation: ToolObservation;
  attempts: number;
  /** The idempotency key the tool saw (`${workflowId}/${firstExecutionRunId}/1`). */
  idempotencyKey: string;
}

/**
 * One tool call made over MCP, run durably: the same gates, key (`${workflowId}/${firstExecutionRunId}/1`), retries and classification as a
 * step of an agent run. The workflow id derives from the caller's idempotency key, so a repeated call finds this
 * run instead of running the tool again. Cancelling the workflow cancels the call and, when the tool has an undo
 * tool, undoes whatever the call may have done.
 */
export async function mcpToolCall(input: McpToolCallInput): Promise<McpToolCallResult> {
  const { workflowId } = workflowInfo();
  // Run-scoped like an agent run's keys (calls started before: `${workflowId}/1`).
  const scope = runScope();
  const catalog = await describeTools();
  const state: AgentRunState = newRunState(workflowId, `MCP call of ${input.tool}`, scope.keyPrefix);
  // The call's state, as a run's: `durable-tools approve` reads a waiting call's arguments and digest here.
  setHandler(getRunStateQuery, () => state);
  const undoTools = undoToolNames(catalog);
  const step: StepContext = {
    calls: activityCalls,
    scope,
    state,
    catalog: new Map(catalog.map((entry) => [entry.name, entry])),
    visible: new Set(modelVisibleTools(catalog, [input.tool]).map((entry) => entry.name)),
    undoTools,
    pending: [],
    irreversibleDone: false,
    // A tool that needs approval waits for a decision here too (`durable-tools approve <workflow id> 1`).
    approvals: createApprovalGate(workflowId, state, undefined, input.trackApprovalSearchAttribute === true),
    // An agent tool called over MCP runs its child like a run's call would (docs/sub-agents.md).
    subAgents: {
      input: {
        goal: state.goal,
        ...(input.trackApprovalSearchAttribute ? { trackApprovalSearchAttribute: true } : {}),
      },
      limits: { maxSteps: AGENT_RUN_DEFAULTS.maxSteps, maxTurns: AGENT_RUN_DEFAULTS.maxTurns },
      conversation: () => [],
    },
  };
  try {
    const record = await runToolStep({ id: 'mcp', name: input.tool, arguments: input.arguments }, step);
    return {
      tool: input.tool,
      observation: record.observation ?? {
        status: 'error',
        code: TOOL_ERROR_CODES.INTERNAL,
        message: 'No observation.',
        hint: '',
        retryable: false,
        attempts: 0,
      },
      attempts: record.attempts ?? 0,
      idempotencyKey: record.idempotencyKey,
    };
  } catch (error) {
    if (isCancellation(error) && step.pending.length > 0) {
      await compensate(step.pending, step.catalog, step.scope, new Map(state.steps.map((s) => [s.stepId, s])), {});
    }
    throw error;
  }
}
