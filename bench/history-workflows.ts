/**
 * Workflows of the history-growth benchmark: the real `agentRun` (it sends the model activity only the
 * transcript delta) and `naiveAgentRun`, the same loop with the same activities and the same tool steps,
 * except that it sends the whole transcript to the model activity every turn — the easy way, whose
 * history grows with the square of the number of steps.
 */
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { ModelActivities } from '../src/activities/model-activities';
import type { TranscriptMessage } from '../src/contract/model-types';
import type { ToolCatalogEntry } from '../src/contract/tool-catalog-entry';
import { AGENT_RUN_DEFAULTS, ENGINE_ACTIVITY_OPTIONS } from '../src/workflows/agent-run-defaults';
import type { AgentRunInput, AgentRunState } from '../src/contract/agent-run-types';
import { undoToolNames } from '../src/contract/tool-visibility';
import { newRunState } from '../src/workflows/run-loop-state';
import { createApprovalGate } from '../src/workflows/approval-gate';
import { runScope } from '../src/workflows/run-ownership';
import type { StepContext } from '../src/workflows/run-types';
import { activityCalls, runToolStep } from '../src/workflows/tool-step';

export { agentRun } from '../src/workflows/agent-run';

const { describeTools } = proxyActivities<{ describeTools(names?: readonly string[]): Promise<ToolCatalogEntry[]> }>(
  ENGINE_ACTIVITY_OPTIONS.describeTools,
);
const { callModel } = proxyActivities<ModelActivities>(ENGINE_ACTIVITY_OPTIONS.callModel);

/**
 * The naive agent loop: model turn → tool calls → observations, with the whole transcript as the model
 * activity's input on every turn. No failure policy, compensation or continue-as-new: the benchmark's
 * runs need none of them.
 */
export async function naiveAgentRun(input: AgentRunInput): Promise<AgentRunState> {
  const { workflowId, firstExecutionRunId } = workflowInfo();
  const maxSteps = input.limits?.maxSteps ?? AGENT_RUN_DEFAULTS.maxSteps;
  const maxTurns = input.limits?.maxTurns ?? AGENT_RUN_DEFAULTS.maxTurns;
  const state: AgentRunState = newRunState(workflowId, input.goal);
  const catalog = await describeTools();
  const step: StepContext = {
    calls: activityCalls,
    scope: runScope(),
    state,
    catalog: new Map(catalog.map((entry) => [entry.name, entry])),
    visible: new Set(catalog.map((entry) => entry.name)),
    undoTools: undoToolNames(catalog),
    pending: [],
    irreversibleDone: false,
    approvals: createApprovalGate(workflowId, state, input.approval, false),
  };
  const transcript: TranscriptMessage[] = [{ role: 'user', content: input.goal }];
  while (state.turns < maxTurns) {
    const turn = await callModel({
      runKey: `${workflowId}/${firstExecutionRunId}`,
      goal: input.goal,
      settings: input.model,
      turn: state.turns,
      fromIndex: 0,
      messages: transcript,
    });
    state.turns += 1;
    transcript.push({
      role: 'assistant',
      ...(turn.text !== undefined ? { text: turn.text } : {}),
      toolCalls: turn.toolCalls,
    });
    if (turn.done || turn.toolCalls.length === 0) {
      state.status = 'completed';
      state.answer = turn.text ?? '';
      return state;
    }
    if (state.stepCount + turn.toolCalls.length > maxSteps) break;
    for (const call of turn.toolCalls) {
      const record = await runToolStep(call, step);
      transcript.push({
        role: 'tool',
        toolCallId: record.toolCallId,
        name: record.tool,
        stepId: record.stepId,
        observation: record.observation!,
      });
    }
  }
  state.status = 'failed';
  state.reason = 'The run reached a limit.';
  return state;
}
