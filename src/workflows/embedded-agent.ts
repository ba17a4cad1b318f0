import type { AgentRunInput, AgentRunResult } from '../contract/agent-run-types';
import { runAgentLoop } from './agent-run';
import { callKey, callScope, numberCall } from './workflow-call-scope';

/**
 * What {@link runAgent} takes: an agent run's input without what only the engine or the `agentRun` workflow sets
 * (carry-over, sub-agent link, fork and dry run, the search-attribute flags, continue-as-new) and without the fast
 * path (docs/fast-path.md: the default of an `agentRun`; an embedded run keeps regular activities, since its steps
 * would hold your workflow's task, and its recovery would wait for your workflow's task timeout).
 */
export type EmbeddedAgentInput = Omit<
  AgentRunInput,
  | 'carriedOver'
  | 'subAgent'
  | 'fork'
  | 'dryRun'
  | 'fastPath'
  | 'continueAsNewAfterSteps'
  | 'trackStatusSearchAttribute'
  | 'trackApprovalSearchAttribute'
>;

/** Options of {@link runAgent}. */
export interface RunAgentOptions {
  /**
   * The agent's id in the workflow's key space instead of the generated one (as `CallToolOptions.callId`): its
   * steps' keys are `${workflowId}/${firstExecutionRunId}/${callId}/agent/${stepId}`.
   */
  callId?: string;
  /**
   * Keep the `DurableAwaitingApproval` search attribute up to date while a call waits for approval, so
   * `durable-tools pending` lists the workflow. Only when the namespace has it registered (an unregistered
   * attribute fails the workflow task); default false: `durable-tools approve <workflowId> <step>` works without it.
   */
  trackApprovalSearchAttribute?: boolean;
}

/**
 * Runs an agent inside your own workflow: the model, the tool calls (each a durable activity, as with
 * `callTool`), approvals, limits and compensation of an `agentRun`, between your own signals, queries, timers and
 * child workflows. Returns the run's result whatever its outcome (`status`: completed, failed, compensated,
 * compensation_failed); a cancellation of the workflow compensates what the agent did, then is rethrown.
 *
 * Embedded, the agent shares its workflow's history and never continues it as new: when Temporal suggests
 * continuing as new (about 4,000 events or 4 MB of history, some 200-400 tool calls), the run ends `failed` with
 * that reason and compensates. Run long agents as a child workflow (`executeChild(agentRun, ...)`), which continues
 * as new by itself. It sets no search attribute unless asked, so it runs on a namespace without the engine's.
 * Its state answers the workflow's `getRunState` query and its approvals the `decideApproval` update (with any
 * `callTool` call that waits), so `durable-tools approve <workflowId> <step>` decides them.
 *
 * @example
 * ```ts
 * export async function concierge(goal: string): Promise<string | undefined> {
 *   let go = false;
 *   setHandler(startSignal, () => void (go = true));
 *   await condition(() => go);
 *   const result = await runAgent({ goal, model: { provider: 'openai', model: 'gpt-4.1' } });
 *   return result.answer;
 * }
 * ```
 */
export async function runAgent(input: EmbeddedAgentInput, options: RunAgentOptions = {}): Promise<AgentRunResult> {
  const scope = callScope();
  const { callId } = numberCall(scope, options.callId);
  const key = callKey(scope, callId);
  return runAgentLoop(embeddedInput(input), {
    scope: { keyPrefix: `${key}/agent`, runKey: scope.runKey },
    modelRunKey: key,
    trackApprovalSearchAttribute: options.trackApprovalSearchAttribute === true,
  });
}

/** The input without the fields an embedded run must not take (a caller in plain JavaScript may pass them). */
function embeddedInput(input: EmbeddedAgentInput): AgentRunInput {
  const {
    carriedOver: _carriedOver,
    subAgent: _subAgent,
    fork: _fork,
    dryRun: _dryRun,
    fastPath: _fastPath,
    continueAsNewAfterSteps: _continueAsNewAfterSteps,
    trackStatusSearchAttribute: _trackStatus,
    trackApprovalSearchAttribute: _trackApprovals,
    ...own
  } = input as AgentRunInput;
  return own;
}
