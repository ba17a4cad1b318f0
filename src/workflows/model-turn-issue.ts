import type { ModelTurnIssue } from '../contract/model-types';

/** A refusal, an empty or a cut-off turn in a row this many times ends the run (under its failure policy). */
export const MAX_CONSECUTIVE_TURN_ISSUES = 2;

/**
 * What the model reads after a turn that was neither tool calls nor an answer: the observation of its own
 * turn, and what to do next.
 */
export function turnIssueNote(issue: ModelTurnIssue): string {
  const next =
    issue.code === 'MODEL_OUTPUT_TRUNCATED'
      ? 'Answer more briefly, or call a tool.'
      : 'Call a tool, or answer the user in plain text.';
  return `[durable-tools] ${issue.code}: ${issue.message} ${next}`;
}

/** The reason a run ends with when the model keeps turning in such turns. */
export function turnIssueReason(issue: ModelTurnIssue, times: number): string {
  return `The model turned in ${times} unusable turns in a row (${issue.code}): ${issue.message}`;
}
