import type { AgentRunInput, StepRecord } from '../contract/agent-run-types';

/**
 * The length of the run's streak of failed tool calls once this step has settled: one more after a failure,
 * none after anything else.
 */
export function nextToolErrorStreak(streak: number, record: StepRecord): number {
  return record.status === 'failed' ? streak + 1 : 0;
}

/** Whether the failure policy aborts the run after this step; the reason if so. */
export function failurePolicyVerdict(
  record: StepRecord,
  input: AgentRunInput,
  consecutiveErrors: number,
): string | undefined {
  if (record.status !== 'failed' || record.observation?.status !== 'error') return undefined;
  const policy = input.failurePolicy;
  if (!policy) return undefined;
  const critical = policy.criticalTools === '*' || (policy.criticalTools ?? []).includes(record.tool);
  // A critical step that did not succeed aborts the run, whatever the reason: permanent error, attempts or
  // time spent on transient errors or timeouts, OUTCOME_UNKNOWN, a tool missing on the worker, a refusal.
  // "retryable" only says a later call might succeed; this call did not, so the run is not `completed`.
  if (critical) {
    const { code, message, retryable } = record.observation;
    const how = retryable ? `failed with ${code} (no attempt left)` : `failed permanently with ${code}`;
    return `Step ${record.stepId} (${record.tool}) ${how}: ${message}`;
  }
  if (policy.maxConsecutiveToolErrors !== undefined && consecutiveErrors >= policy.maxConsecutiveToolErrors) {
    return `${consecutiveErrors} tool calls failed in a row (last: step ${record.stepId}, ${record.tool}).`;
  }
  return undefined;
}

/**
 * The first abort reason the failure policy finds among background steps that ended failed. Each is judged on
 * its own (a streak counts only the calls of a turn, not those of the background).
 */
export function backgroundFailureVerdict(records: readonly StepRecord[], input: AgentRunInput): string | undefined {
  for (const record of records) {
    const reason = failurePolicyVerdict(record, input, 0);
    if (reason) return reason;
  }
  return undefined;
}
