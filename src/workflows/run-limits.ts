import type { AgentRunInput, RunUsage } from '../contract/agent-run-types';
import type { ModelTurn } from '../contract/model-types';
import type { RunAbort } from './run-loop-state';
import { usageLimitReason } from './run-usage';

/**
 * Limits of an agent run. Here rather than in agent-run-defaults.ts (which re-exports it): the fused step's
 * activity judges turns with these functions, and nothing here imports `@temporalio/workflow`.
 */
export const AGENT_RUN_DEFAULTS = {
  maxSteps: 50,
  maxTurns: 25,
} as const;

/** What the limit checks read of the run input (the fused step's activity gets only these). */
export type LimitedInput = Pick<AgentRunInput, 'limits' | 'failurePolicy'>;

/** The run's turn and step limits, its own or the defaults. */
export interface RunLimits {
  maxSteps: number;
  maxTurns: number;
}

/** The limits of a run: those of its input, else {@link AGENT_RUN_DEFAULTS}. */
export function runLimits(input: AgentRunInput): RunLimits {
  return {
    maxSteps: input.limits?.maxSteps ?? AGENT_RUN_DEFAULTS.maxSteps,
    maxTurns: input.limits?.maxTurns ?? AGENT_RUN_DEFAULTS.maxTurns,
  };
}

function limitAbort(reason: string, input: LimitedInput): RunAbort {
  return { status: 'failed', reason, compensate: input.failurePolicy?.compensateOnLimit ?? true };
}

/** The abort when the run has taken all its model turns, before it asks for another. */
export function turnLimitAbort(turns: number, limits: RunLimits, input: LimitedInput): RunAbort | undefined {
  if (turns < limits.maxTurns) return undefined;
  return limitAbort(`The run reached its limit of ${limits.maxTurns} model turns.`, input);
}

/** The abort when a turn's calls would take the run past its tool-call limit (none of them runs then). */
export function stepLimitAbort(
  stepCount: number,
  calls: number,
  limits: RunLimits,
  input: LimitedInput,
): RunAbort | undefined {
  if (stepCount + calls <= limits.maxSteps) return undefined;
  return limitAbort(`The run reached its limit of ${limits.maxSteps} tool calls.`, input);
}

/**
 * The abort when the run's usage is over its token or cost budget after a turn. A clean final answer is
 * accepted whatever it cost: the budget stops further work, not a finished run.
 */
export function usageBudgetAbort(turn: ModelTurn, usage: RunUsage, input: LimitedInput): RunAbort | undefined {
  if (turn.done && !turn.issue) return undefined;
  const reason = usageLimitReason(usage, input.limits);
  return reason ? limitAbort(reason, input) : undefined;
}
