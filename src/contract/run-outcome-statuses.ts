/**
 * How a run's outcome maps onto the Temporal workflow's own status. Pure data: shared by the workflow, which
 * ends the run, and the client, which reads the result back.
 */

/**
 * Run statuses that end the Temporal workflow as Failed, with an `ApplicationFailure` whose `type` is the status,
 * whose details hold the run's result and which is non-retryable. `cancelled` ends it as Cancelled; `completed`
 * as Completed.
 */
export const FAILED_RUN_STATUSES = ['failed', 'compensated', 'compensation_failed'] as const;

/** A run status that ends the workflow as Failed. */
export type FailedRunStatus = (typeof FAILED_RUN_STATUSES)[number];

/** Whether a run that ended with this status ends its workflow as Failed. */
export function isFailedRunStatus(status: string | undefined): status is FailedRunStatus {
  return (FAILED_RUN_STATUSES as readonly string[]).includes(status ?? '');
}

/** The `patched()` id under which runs end failed runs as Failed workflows (runs started before complete). */
export const RUN_OUTCOME_PATCH = 'durable-tools/run-outcome-as-workflow-status';
