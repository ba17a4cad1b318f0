/**
 * A `tools/call` (without `task`) of a tool that needs a human decision: the server does not hold the request
 * open for hours. It waits for the call's result or for the call to start waiting for approval, whichever
 * comes first, and in the second case answers at once with an `APPROVAL_REQUIRED` error result naming the
 * durable call, its digest and how to decide and collect the result. The call itself keeps waiting.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@temporalio/client';
import { getPendingApprovals, type PendingApproval } from '../../client/approval-client';
import { pollPause } from './mcp-poll-pause';

/** How often the call's state is read while its result is awaited. */
export const MCP_APPROVAL_POLL_MS = 1_000;

/**
 * Resolves with the call's waiting step once it waits for approval, or with undefined once `signal` aborts
 * (the result came first). Reads the call's state (a query) every {@link MCP_APPROVAL_POLL_MS}. A step `skip`
 * names (one just decided, which the state may show a moment longer) does not count.
 */
export async function approvalRequested(
  client: Client,
  workflowId: string,
  signal: AbortSignal,
  skip: (waiting: PendingApproval) => boolean = () => false,
): Promise<PendingApproval | undefined> {
  while (!signal.aborted) {
    const pending = await getPendingApprovals(client, workflowId).catch((): PendingApproval[] => []);
    const waiting = pending.find((step) => !skip(step));
    if (waiting) return waiting;
    await pollPause(MCP_APPROVAL_POLL_MS, signal);
  }
  return undefined;
}

/**
 * The answer to a `tools/call` whose call waits for approval: what waits, how to decide, how to get the result.
 * `taskId` is the durable call's workflow id: the waiting call's own, or its parent's when a sub-agent of the
 * call waits (decided by the sub-agent's id, read by the task's).
 */
export function approvalRequiredResult(
  call: PendingApproval,
  keyed: boolean,
  taskId: string = call.workflowId,
): CallToolResult {
  const again = keyed
    ? `call the tool again with the same idempotency key (it runs nothing twice) or read task ${taskId} (tasks/get, tasks/result)`
    : `read task ${taskId} (tasks/get, tasks/result); calling the tool again without an idempotency key makes a new call that waits for its own approval`;
  return {
    isError: true,
    content: [
      {
        type: 'text',
        text:
          `APPROVAL_REQUIRED: "${call.tool}" needs a human approval before it runs; nothing has run yet. ` +
          `The durable call ${call.workflowId}${call.parent ? ` (a sub-agent of ${taskId})` : ''} (step ${call.stepId}, arguments digest ${call.digest}) waits for a decision ` +
          `until ${new Date(call.deadline).toISOString()} (then it counts as rejected).\n` +
          `Hint: a human decides with \`durable-tools approve ${call.workflowId} ${call.stepId} --digest ${call.digest}\` ` +
          `(or \`reject ... --reason\`), or an approver with the server's decide_approval tool where it is served; for the result, ${again}.`,
      },
    ],
    _meta: {
      'io.durable-tools/approval': {
        workflowId: call.workflowId,
        stepId: call.stepId,
        tool: call.tool,
        digest: call.digest,
        deadline: call.deadline,
      },
    },
  };
}
