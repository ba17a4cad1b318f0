import {
  isCancellation,
  proxyActivities,
  scheduleActivity,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { ModelActivities } from '../activities/model-activities';
import type { ToolActivityInput, ToolActivityResult } from '../activities/tool-activity-types';
import type { ModelToolCall, TranscriptMessage } from '../model/model-types';
import type { ToolCatalogEntry } from '../tools/tool-catalog-entry';
import type { ToolErrorObservation, ToolObservation } from '../tools/tool-error-code';
import { SEARCH_ATTRIBUTES } from '../search-attributes';
import { AGENT_RUN_DEFAULTS, ENGINE_ACTIVITY_OPTIONS, SUMMARY_MAX_LENGTH } from './agent-run-defaults';
import { getRunStateQuery } from './agent-run-messages';
import type { AgentRunInput, AgentRunResult, AgentRunState, RunStatus, StepRecord } from './agent-run-types';
import { observationFromFailure } from './observation-from-failure';

const { describeTools } = proxyActivities<{ describeTools(names?: readonly string[]): Promise<ToolCatalogEntry[]> }>(
  ENGINE_ACTIVITY_OPTIONS.describeTools,
);
const { callModel } = proxyActivities<ModelActivities>(ENGINE_ACTIVITY_OPTIONS.callModel);

/**
 * One agent run: model → tool calls → observations, until the model finishes or a limit is hit.
 *
 * The workflow knows tools only through the JSON catalog (fetched by the `describeTools` activity, so
 * it is recorded in history). Each tool call is an activity whose type is the tool's name, keyed by
 * `${workflowId}/${stepId}`. A call the model got wrong becomes an error observation the model can
 * correct; no model output can fail the workflow.
 */
export async function agentRun(input: AgentRunInput): Promise<AgentRunResult> {
  const { workflowId } = workflowInfo();
  const maxSteps = input.limits?.maxSteps ?? AGENT_RUN_DEFAULTS.maxSteps;
  const maxTurns = input.limits?.maxTurns ?? AGENT_RUN_DEFAULTS.maxTurns;
  const state: AgentRunState = { runId: workflowId, goal: input.goal, status: 'running', turns: 0, steps: [] };
  setHandler(getRunStateQuery, () => state);
  setStatus(state, 'running', input);

  const catalog = await describeTools(input.allowedTools);
  const toolsByName = new Map(catalog.map((entry) => [entry.name, entry]));
  const transcript: TranscriptMessage[] = [{ role: 'user', content: input.goal }];

  try {
    while (state.turns < maxTurns) {
      const turn = await callModel({ goal: input.goal, transcript, tools: catalog, settings: input.model });
      state.turns += 1;
      const toolCalls = Array.isArray(turn.toolCalls) ? turn.toolCalls : [];
      transcript.push({ role: 'assistant', ...(turn.text !== undefined ? { text: turn.text } : {}), toolCalls });
      if (turn.done || toolCalls.length === 0) {
        state.answer = typeof turn.text === 'string' ? turn.text : '';
        return finish(state, 'completed', input);
      }
      for (const call of toolCalls) {
        if (state.steps.length >= maxSteps) {
          return finish(state, 'step_limit', input, `The run reached its limit of ${maxSteps} tool calls.`);
        }
        const step = await runStep(call, state, toolsByName, workflowId);
        transcript.push({
          role: 'tool',
          toolCallId: step.toolCallId,
          name: step.tool,
          stepId: step.stepId,
          observation: step.observation as ToolObservation,
        });
      }
    }
    return finish(state, 'step_limit', input, `The run reached its limit of ${maxTurns} model turns.`);
  } catch (error) {
    if (isCancellation(error)) throw error;
    // Only the engine's own activities (catalog, model) can get here: tool failures are observations.
    return finish(state, 'failed', input, error instanceof Error ? error.message : String(error));
  }
}

async function runStep(
  call: ModelToolCall,
  state: AgentRunState,
  toolsByName: Map<string, ToolCatalogEntry>,
  workflowId: string,
): Promise<StepRecord> {
  const stepId = state.steps.length + 1;
  const name = typeof call?.name === 'string' ? call.name : String(call?.name);
  const step: StepRecord = {
    stepId,
    turn: state.turns,
    toolCallId: typeof call?.id === 'string' ? call.id : `step_${stepId}`,
    tool: name,
    arguments: call?.arguments,
    idempotencyKey: `${workflowId}/${stepId}`,
    status: 'pending',
  };
  state.steps.push(step);

  const entry = toolsByName.get(name);
  if (!entry) {
    step.status = 'failed';
    step.observation = unknownTool(name, [...toolsByName.keys()]);
    return step;
  }

  step.status = 'running';
  step.startedAt = Date.now();
  try {
    const result = await scheduleActivity<ToolActivityResult>(
      entry.name,
      [{ arguments: call.arguments, idempotencyKey: step.idempotencyKey, stepId } satisfies ToolActivityInput],
      {
        summary: summarize(entry.name, call.arguments),
        startToCloseTimeout: entry.timeoutMs,
        scheduleToCloseTimeout: entry.retry.totalDeadlineMs,
        retry: {
          maximumAttempts: entry.retry.maximumAttempts,
          initialInterval: entry.retry.initialDelayMs,
          maximumInterval: entry.retry.maxDelayMs,
          backoffCoefficient: 2,
          // A tool missing on the worker fails at once instead of retrying.
          nonRetryableErrorTypes: ['NotFoundError'],
        },
      },
    );
    step.status = 'succeeded';
    step.attempts = result.attempt;
    step.observation = { status: 'ok', output: result.output, ...(result.replayed ? { replayed: true } : {}) };
  } catch (error) {
    if (isCancellation(error)) throw error;
    step.status = 'failed';
    step.observation = observationFromFailure(error, entry.name, entry.retry.maximumAttempts);
    step.attempts = step.observation.attempts;
  }
  step.endedAt = Date.now();
  return step;
}

function unknownTool(name: string, known: string[]): ToolErrorObservation {
  return {
    status: 'error',
    code: 'UNKNOWN_TOOL',
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

function finish(state: AgentRunState, status: RunStatus, input: AgentRunInput, reason?: string): AgentRunResult {
  setStatus(state, status, input);
  if (reason !== undefined) state.reason = reason;
  return state;
}

function setStatus(state: AgentRunState, status: RunStatus, input: AgentRunInput): void {
  state.status = status;
  if (input.trackStatusSearchAttribute) {
    upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.runStatus, value: status }]);
  }
}
