import type { AgentRunInput, AgentRunLimits, AgentRunState } from '../contract/agent-run-types';
import { AGENT_RUN_DEFAULTS } from './agent-run-defaults';
import type { RunLimits } from './run-limits';

/** The limits a sub-agent gets, or why the parent has nothing left to give it. */
export type CarvedLimits = { limits: AgentRunLimits } | { exhausted: string };

/** The smaller of a child's own limit and what the parent has left (the parent's when the child sets none). */
function capped(own: number | undefined, left: number | undefined): number | undefined {
  if (left === undefined) return own;
  return own === undefined ? left : Math.min(own, left);
}

/**
 * Carves a sub-agent's limits out of its parent's remaining budget (docs/sub-agents.md, "Budgets"): tool calls
 * (the parent's limit minus its own calls and its earlier children's), input and output tokens, and cost. Each
 * limit is the child's own or what the parent has left, whichever is smaller; turns are the child's own. When
 * the parent has nothing left of one of them the child does not start.
 */
export function carveSubAgentLimits(
  own: AgentRunLimits | undefined,
  parent: { input: Pick<AgentRunInput, 'limits'>; limits: RunLimits; state: AgentRunState },
): CarvedLimits {
  const { input, limits, state } = parent;
  const stepsLeft = limits.maxSteps - state.stepCount - (state.subAgentSteps ?? 0);
  const inputLeft = leftOf(input.limits?.maxInputTokens, state.usage.inputTokens);
  const outputLeft = leftOf(input.limits?.maxOutputTokens, state.usage.outputTokens);
  const costLeft = leftOf(input.limits?.maxCost, state.usage.cost ?? 0);
  const exhausted = [
    stepsLeft <= 0 ? `tool calls (${limits.maxSteps})` : undefined,
    inputLeft !== undefined && inputLeft <= 0 ? `input tokens (${input.limits?.maxInputTokens})` : undefined,
    outputLeft !== undefined && outputLeft <= 0 ? `output tokens (${input.limits?.maxOutputTokens})` : undefined,
    costLeft !== undefined && costLeft <= 0 ? `cost (${input.limits?.maxCost})` : undefined,
  ].filter((what): what is string => what !== undefined);
  if (exhausted.length > 0) return { exhausted: `The run has used all its ${exhausted.join(', ')}.` };
  const carved: AgentRunLimits = {
    maxSteps: Math.min(own?.maxSteps ?? AGENT_RUN_DEFAULTS.maxSteps, stepsLeft),
    maxTurns: own?.maxTurns ?? AGENT_RUN_DEFAULTS.maxTurns,
  };
  const maxInputTokens = capped(own?.maxInputTokens, inputLeft);
  const maxOutputTokens = capped(own?.maxOutputTokens, outputLeft);
  const maxCost = capped(own?.maxCost, costLeft);
  return {
    limits: {
      ...carved,
      ...(maxInputTokens !== undefined ? { maxInputTokens } : {}),
      ...(maxOutputTokens !== undefined ? { maxOutputTokens } : {}),
      ...(maxCost !== undefined ? { maxCost } : {}),
    },
  };
}

function leftOf(limit: number | undefined, used: number): number | undefined {
  return limit === undefined ? undefined : limit - used;
}

/**
 * Counts what a finished sub-agent used against its parent: its tokens and cost in the parent's usage totals
 * (so the parent's own budget sees them), its tool calls (its children's included) in `subAgentSteps`.
 */
export function chargeSubAgent(state: AgentRunState, child: AgentRunState): void {
  const { usage } = state;
  usage.inputTokens += child.usage.inputTokens;
  usage.outputTokens += child.usage.outputTokens;
  usage.unreportedTurns += child.usage.unreportedTurns;
  usage.unpricedTurns += child.usage.unpricedTurns;
  if (child.usage.cost !== undefined) usage.cost = (usage.cost ?? 0) + child.usage.cost;
  state.subAgentSteps = (state.subAgentSteps ?? 0) + child.stepCount + (child.subAgentSteps ?? 0);
}
