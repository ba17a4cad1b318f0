import type { ModelToolCall } from '../contract/model-types';
import { TOOL_ERROR_CODES } from '../contract/activity-protocol';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { answerDescribeTools, DESCRIBE_TOOLS_TOOL } from '../contract/tool-disclosure';
import type { StepRecord } from '../contract/agent-run-types';
import { stepKey } from './run-ownership';
import type { StepContext } from './run-types';

/** Whether a call is the built-in `describe_tools` of a run whose catalog is disclosed on demand. */
export function isDescribeToolsCall(call: ModelToolCall, disclosedOnDemand: boolean): boolean {
  return disclosedOnDemand && call?.name === DESCRIBE_TOOLS_TOOL;
}

/**
 * Answers the built-in read-only `describe_tools` inside the workflow, from the catalog recorded in
 * history: deterministic, no activity, no effect. Only tools visible to the run are described. It is a step
 * like any other (a step id, a record, an observation); bad arguments are an `INVALID_ARGUMENTS` observation.
 */
export async function describeToolsStep(call: ModelToolCall, ctx: StepContext): Promise<StepRecord> {
  const { state } = ctx;
  state.stepCount += 1;
  const stepId = state.stepCount;
  const visible: ToolCatalogEntry[] = [];
  for (const name of ctx.visible) {
    const entry = ctx.catalog.get(name);
    if (entry) visible.push(entry);
  }
  const answer = answerDescribeTools(call.arguments, visible);
  const now = Date.now();
  const step: StepRecord = {
    stepId,
    turn: state.turns,
    toolCallId: typeof call.id === 'string' ? call.id : `step_${stepId}`,
    tool: DESCRIBE_TOOLS_TOOL,
    arguments: call.arguments,
    idempotencyKey: stepKey(ctx.scope, stepId),
    status: answer.ok ? 'succeeded' : 'failed',
    observation: answer.ok
      ? { status: 'ok', output: answer.output }
      : {
          status: 'error',
          code: TOOL_ERROR_CODES.INVALID_ARGUMENTS,
          message: answer.message,
          hint: answer.hint,
          retryable: false,
          attempts: 0,
        },
    attempts: 0,
    startedAt: now,
    endedAt: now,
  };
  state.steps.push(step);
  return step;
}
