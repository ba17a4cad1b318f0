import type { RunUsage } from '../contract/agent-run-types';
import type { ModelTurn } from '../contract/model-types';
import { MAX_CONSECUTIVE_TURN_ISSUES, turnIssueNote, turnIssueReason } from './model-turn-issue';
import { stepLimitAbort, usageBudgetAbort, type LimitedInput, type RunLimits } from './run-limits';
import { failedRun, type RunAbort } from './run-loop-state';
import type { TurnReading } from './turn-reading';

/** What the run does after a model turn. */
export type TurnVerdict =
  /** The run ends early (a budget, a limit, or too many unusable turns). */
  | { kind: 'abort'; abort: RunAbort }
  /** The turn was unusable: the model reads `note` and gets another turn. */
  | { kind: 'retry'; note: string }
  /** The model answered: the run finishes with `answer`. */
  | { kind: 'answer'; answer: string }
  /** The turn's calls run. */
  | { kind: 'run-calls' };

/** What {@link judgeTurn} looks at besides the turn. */
export interface TurnContext {
  /** The run input's limits and failure policy (the fused step's activity gets only these). */
  input: LimitedInput;
  limits: RunLimits;
  usage: RunUsage;
  /** Tool calls made so far in the run. */
  stepCount: number;
  /** Unusable turns in a row before this one. */
  turnIssues: number;
}

/**
 * Judges a turn, in this order: the usage budget, an unusable turn (a refusal, an empty or a cut-off turn is
 * an observation for the model, never a completed answer; twice in a row ends the run), an answer (done, or
 * no calls), the tool-call limit. Returns the verdict and the new count of unusable turns in a row.
 */
export function judgeTurn(
  turn: ModelTurn,
  reading: TurnReading,
  context: TurnContext,
): { verdict: TurnVerdict; turnIssues: number } {
  const { input, limits, turnIssues } = context;
  const overBudget = usageBudgetAbort(turn, context.usage, input);
  if (overBudget) return { verdict: { kind: 'abort', abort: overBudget }, turnIssues };
  if (turn.issue && reading.calls.length === 0) {
    const issues = turnIssues + 1;
    if (issues >= MAX_CONSECUTIVE_TURN_ISSUES) {
      return { verdict: { kind: 'abort', abort: failedRun(turnIssueReason(turn.issue, issues)) }, turnIssues: issues };
    }
    return { verdict: { kind: 'retry', note: turnIssueNote(turn.issue) }, turnIssues: issues };
  }
  if (turn.done || reading.calls.length === 0) {
    return { verdict: { kind: 'answer', answer: reading.text ?? '' }, turnIssues: 0 };
  }
  const overLimit = stepLimitAbort(context.stepCount, reading.calls.length, limits, input);
  if (overLimit) return { verdict: { kind: 'abort', abort: overLimit }, turnIssues: 0 };
  return { verdict: { kind: 'run-calls' }, turnIssues: 0 };
}
