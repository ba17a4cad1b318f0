import { ApplicationFailure, patched, setCurrentDetails } from '@temporalio/workflow';
import type { AgentRunResult } from '../contract/agent-run-types';
import { isFailedRunStatus, RUN_OUTCOME_PATCH } from '../contract/run-outcome-statuses';

/**
 * Ends the workflow the way the run ended, so the Temporal UI's list and header, `temporal workflow show` and
 * `ExecutionStatus` queries tell the truth: a completed run returns its result; a failed, compensated or
 * compensation_failed run throws a non-retryable `ApplicationFailure` whose type is the status and whose
 * details hold the result (`waitForAgentRun` returns it). The workflow's current details show the outcome.
 */
export function endWithOutcome(result: AgentRunResult): AgentRunResult {
  showOutcome(result);
  if (!isFailedRunStatus(result.status) || !patched(RUN_OUTCOME_PATCH)) return result;
  throw ApplicationFailure.create({
    type: result.status,
    message: `Run ${result.status}${result.reason ? `: ${result.reason}` : '.'}`,
    details: [result],
    nonRetryable: true,
  });
}

/** Shows the goal and the outcome as the workflow's current details (the UI's "Current Details"). */
export function showOutcome(result: AgentRunResult): void {
  const lines = [`**Goal:** ${result.goal}`, `**Outcome:** ${result.status}`];
  if (result.reason) lines.push(`**Why:** ${result.reason}`);
  if (result.answer) lines.push(`**Answer:** ${result.answer}`);
  const tokens = result.usage
    ? `, ${result.usage.inputTokens} input and ${result.usage.outputTokens} output tokens`
    : '';
  lines.push(`${result.turns} model turns, ${result.stepCount} tool calls${tokens}.`);
  setCurrentDetails(lines.join('\n\n').slice(0, 10_000));
}
