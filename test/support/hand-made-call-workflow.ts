/**
 * A workflow of a test's own (bundled by the test, not the engine's): it calls a tool's activity by hand with
 * `proxyActivities`, the way issue 43 found a pipeline doing it — a `ToolActivityInput` built by hand, no approval
 * gate, no decision. Workflow code: it imports only `@temporalio/workflow` and types of src/contract.
 */
import { ActivityFailure, ApplicationFailure, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { ToolActivityInput, ToolActivityResult } from '../../src/contract/tool-activity-types';

/** What {@link handMadeToolCall} saw: the tool's output, or the type of the failure it was refused with. */
export type HandMadeCallOutcome =
  | { ran: true; output: unknown }
  | { ran: false; failureType: string | undefined; nonRetryable: boolean; message: string };

/** Calls the activity named `tool` once, under `key` (default `${workflowId}/${firstExecutionRunId}/1`). */
export async function handMadeToolCall(tool: string, args: unknown, key?: string): Promise<HandMadeCallOutcome> {
  const activities = proxyActivities<Record<string, (input: ToolActivityInput) => Promise<ToolActivityResult>>>({
    startToCloseTimeout: '10 seconds',
    retry: { maximumAttempts: 1 },
  });
  const { workflowId, firstExecutionRunId } = workflowInfo();
  const idempotencyKey = key ?? `${workflowId}/${firstExecutionRunId}/1`;
  const input: ToolActivityInput = { arguments: args, idempotencyKey, stepId: 1 };
  try {
    const result = await activities[tool]!(input);
    return { ran: true, output: result.output };
  } catch (error) {
    const cause = error instanceof ActivityFailure ? error.cause : error;
    if (!(cause instanceof ApplicationFailure)) throw error;
    return {
      ran: false,
      failureType: cause.type ?? undefined,
      nonRetryable: cause.nonRetryable === true,
      message: cause.message,
    };
  }
}
