import {
  ApplicationFailure,
  ChildWorkflowCancellationType,
  ChildWorkflowFailure,
  executeChild,
  isCancellation,
  ParentClosePolicy,
  scheduleActivity,
  workflowInfo,
} from '@temporalio/workflow';
import type { AgentRunInput, AgentRunResult, PendingCompensation, StepRecord } from '../contract/agent-run-types';
import { TOOL_ERROR_CODES, toolFailure, type ToolErrorObservation } from '../contract/activity-protocol';
import { FAST_PATH_LIMITS, fastPathByDefault } from '../contract/fast-path';
import { PAYLOAD_LIMITS, truncateText } from '../contract/payload-limits';
import { subAgentWorkflowId, type SubAgentOutput, type SubAgentSpec } from '../contract/sub-agent-spec';
import type { ToolActivityInput, ToolActivityResult } from '../contract/tool-activity-types';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { SUMMARY_MAX_LENGTH } from './agent-run-defaults';
import { handoffConversation } from './handoff-conversation';
import { carveSubAgentLimits, chargeSubAgent } from './sub-agent-budget';
import { toolActivityOptions } from './tool-call-options';
import type { StepContext, SubAgentCalls } from './run-types';

/** The workflow type of every agent run, sub-agents included (`src/workflows/index.ts`). */
const AGENT_RUN_WORKFLOW = 'agentRun';

/** Characters of a sub-agent's answer the parent's model reads inline. */
const ANSWER_MAX_CHARS = 16_000;

/**
 * Runs an agent tool's call (docs/sub-agents.md): the tool's activity validates the arguments and returns the
 * child's spec, then the child runs as a child workflow of this run, with limits carved out of what the run has
 * left, keys under the call's key and `parentClosePolicy` REQUEST_CANCEL (a run that ends, however it ends,
 * never leaves a child running). The child's answer is the call's output; a child that did not complete is a
 * `SUB_AGENT_FAILED` failure. A completed child's compensations become the run's (newest last), so a run that
 * aborts later undoes the child's effects too. Cancellation of the run cancels the child and waits for it to
 * finish its own compensation.
 */
export async function callAgentTool(
  step: StepRecord,
  entry: ToolCatalogEntry,
  input: ToolActivityInput,
  redactedArguments: unknown,
  ctx: StepContext,
): Promise<ToolActivityResult> {
  const prepared = await scheduleActivity<ToolActivityResult>(
    entry.name,
    [input],
    toolActivityOptions(entry, redactedArguments),
  );
  const calls = ctx.subAgents;
  if (!calls) throw subAgentFailure('This run cannot start sub-agents.', 'Answer without this tool.');
  const spec = prepared.output;
  if (!isSubAgentSpec(spec)) {
    // Above the tool output ceiling (a huge goal or model settings) the output is a claim check, not a spec.
    throw subAgentFailure(
      `The agent tool "${entry.name}" built a sub-agent spec too large to carry (over ${PAYLOAD_LIMITS.maxToolOutputBytes} bytes). The sub-agent was not started.`,
      'Call it with shorter arguments.',
    );
  }
  const carved = carveSubAgentLimits(spec.limits, { input: calls.input, limits: calls.limits, state: ctx.state });
  if ('exhausted' in carved) {
    throw subAgentFailure(`${carved.exhausted} The sub-agent was not started.`, 'Finish with what you have.');
  }
  const model = spec.model ?? calls.input.model;
  if (!model) {
    throw subAgentFailure(
      `The agent tool "${entry.name}" declares no model, and its caller has none to lend. The sub-agent was not started.`,
      'Declare the model in defineAgentTool({ model }).',
    );
  }
  const workflowId = subAgentWorkflowId(step.idempotencyKey, entry.name);
  step.childWorkflowId = workflowId;
  const child = await runChild(workflowId, childInput(step, entry, { ...spec, model }, carved.limits, calls), ctx);
  chargeSubAgent(ctx.state, child);
  takeOverCompensations(step, child, workflowId, ctx.pending);
  const answer = child.answer ?? '';
  if (entry.agent?.handoff) calls.handoffAnswer = answer;
  const output: SubAgentOutput = {
    answer: truncateText(answer, ANSWER_MAX_CHARS),
    ...(child.output !== undefined ? { output: child.output } : {}),
    childWorkflowId: workflowId,
    steps: child.stepCount + (child.subAgentSteps ?? 0),
    usage: {
      inputTokens: child.usage.inputTokens,
      outputTokens: child.usage.outputTokens,
      ...(child.usage.cost !== undefined ? { cost: child.usage.cost } : {}),
    },
  };
  return { output, attempt: prepared.attempt };
}

/** The child's input: its spec, the carved limits, what it inherits from the parent, and its link to the call. */
function childInput(
  step: StepRecord,
  entry: ToolCatalogEntry,
  spec: SubAgentSpec & { model: AgentRunInput['model'] },
  limits: AgentRunInput['limits'],
  calls: SubAgentCalls,
): AgentRunInput {
  const parent = calls.input;
  const handoff = entry.agent?.handoff === true;
  const conversation = handoff ? handoffConversation(calls.conversation()) : '';
  return {
    goal: conversation ? `${spec.goal}\n\nThe conversation so far, handed over to you:\n${conversation}` : spec.goal,
    model: spec.model,
    allowedTools: spec.allowedTools,
    limits,
    ...(spec.failurePolicy ? { failurePolicy: spec.failurePolicy } : {}),
    ...(spec.parallelToolCalls !== undefined ? { parallelToolCalls: spec.parallelToolCalls } : {}),
    ...(spec.instructions !== undefined ? { instructions: spec.instructions } : {}),
    ...(spec.output !== undefined ? { output: spec.output } : {}),
    ...(parent.approval ? { approval: parent.approval } : {}),
    ...(parent.compensation ? { compensation: parent.compensation } : {}),
    ...(parent.costTable ? { costTable: parent.costTable } : {}),
    ...(parent.trackStatusSearchAttribute ? { trackStatusSearchAttribute: true } : {}),
    ...(parent.trackApprovalSearchAttribute ? { trackApprovalSearchAttribute: true } : {}),
    ...(calls.lendsFastPath && parent.fastPath !== undefined ? { fastPath: parent.fastPath } : {}),
    subAgent: {
      parentWorkflowId: workflowInfo().workflowId,
      parentStepId: step.stepId,
      tool: entry.name,
      callKey: step.idempotencyKey,
      ...(handoff ? { handoff: true } : {}),
    },
  };
}

/**
 * Runs the child to its end. A child that did not complete (failed, compensated, its limits, terminated) is
 * charged to the run and becomes a `SUB_AGENT_FAILED` failure; a cancellation of the run goes on up once the
 * child has finished cancelling (and compensating).
 */
async function runChild(workflowId: string, input: AgentRunInput, ctx: StepContext): Promise<AgentRunResult> {
  try {
    return await executeChild<(input: AgentRunInput) => Promise<AgentRunResult>>(AGENT_RUN_WORKFLOW, {
      args: [input],
      workflowId,
      // A child on the fast path goes on after its worker died as soon as a run that startAgentRun starts does.
      ...(ctx.subAgents?.lendsFastPath && fastPathByDefault(input.fastPath)
        ? { workflowTaskTimeout: FAST_PATH_LIMITS.workflowTaskTimeoutMs }
        : {}),
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
      staticSummary: `sub-agent ${input.subAgent!.tool} of step ${input.subAgent!.parentStepId}`.slice(
        0,
        SUMMARY_MAX_LENGTH,
      ),
    });
  } catch (error) {
    if (isCancellation(error) || !(error instanceof ChildWorkflowFailure)) throw error;
    const result = failedChildResult(error);
    if (result) chargeSubAgent(ctx.state, result);
    const why = result?.reason ?? error.cause?.message ?? error.message;
    throw subAgentFailure(
      `The sub-agent ${workflowId} ended ${result?.status ?? 'without a result'}: ${truncateText(why, PAYLOAD_LIMITS.errorTextChars)}`,
      result?.status === 'compensated'
        ? 'What it did was undone. Try another way, or answer with what you know.'
        : 'Try another way, or answer with what you know.',
    );
  }
}

function isSubAgentSpec(value: unknown): value is SubAgentSpec {
  if (!value || typeof value !== 'object') return false;
  const spec = value as Partial<SubAgentSpec>;
  return typeof spec.goal === 'string' && Array.isArray(spec.allowedTools);
}

/** The run result a failed child put in its failure's details (`endWithOutcome`), when it is there. */
function failedChildResult(error: ChildWorkflowFailure): AgentRunResult | undefined {
  const cause = error.cause;
  if (!(cause instanceof ApplicationFailure) || !Array.isArray(cause.details)) return undefined;
  const [result] = cause.details as unknown[];
  if (!result || typeof result !== 'object' || !('usage' in result) || !('stepCount' in result)) return undefined;
  return result as AgentRunResult;
}

/**
 * A completed child's compensations become the run's own, in the child's order, under the calling step (its
 * status shows them running); each keeps the child's key and owner, so the undo reaches the child's effect.
 */
function takeOverCompensations(
  step: StepRecord,
  child: AgentRunResult,
  workflowId: string,
  pending: PendingCompensation[],
): void {
  const owed = child.subAgentCompensations ?? [];
  for (const item of owed) {
    pending.push({ ...item, stepId: step.stepId, subAgentWorkflowId: item.subAgentWorkflowId ?? workflowId });
  }
  if (owed.length > 0) step.undo = [...new Set(owed.map((item) => item.undo))].join(', ');
}

function subAgentFailure(message: string, hint: string): ApplicationFailure {
  const observation: ToolErrorObservation = {
    status: 'error',
    code: TOOL_ERROR_CODES.SUB_AGENT_FAILED,
    message,
    hint,
    retryable: false,
    attempts: 1,
  };
  return toolFailure(observation, { mayHaveHadEffect: true });
}
