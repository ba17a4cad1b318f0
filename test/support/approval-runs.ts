import type { Client } from '@temporalio/client';
import { approveStep, getPendingApprovals, type PendingApproval } from '../../src/client/approval-client';
import { startAgentRun, type AgentRunHandle } from '../../src/client/agent-run-client';
import { waitFor } from './wait-for';

/** A run whose call waits for a human's approval. */
export interface RunAwaitingApproval {
  handle: AgentRunHandle;
  /** The call that waits: its step, tool and arguments digest. */
  pending: PendingApproval;
}

/**
 * Starts a run on `taskQueue` whose first call is `pay` of `amountEur` for invoice INV-7 (then it says it paid),
 * and resolves once that call waits for approval.
 */
export async function startPayAwaitingApproval(
  client: Client,
  taskQueue: string,
  amountEur: number,
): Promise<RunAwaitingApproval> {
  const handle = await startAgentRun(
    client,
    {
      goal: 'Pay the invoice',
      model: {
        provider: 'scripted',
        script: [
          { toolCalls: [{ name: 'pay', arguments: { amountEur, reference: 'INV-7' } }] },
          { text: 'Paid.', final: true },
        ],
      },
    },
    { taskQueue },
  );
  return { handle, pending: await waitForPendingApproval(client, handle.workflowId, 'the call') };
}

/** Waits until a call of the run `workflowId` (`what`, for the message) waits for approval; the first such call. */
export async function waitForPendingApproval(
  client: Client,
  workflowId: string,
  what: string,
): Promise<PendingApproval> {
  const [pending] = await waitFor(`${what} to wait for approval`, async () => {
    const found = await getPendingApprovals(client, workflowId);
    return found.length > 0 ? found : undefined;
  });
  return pending!;
}

/** Waits until a call of the run `workflowId` (`what`, for the message) waits for approval, and approves it as `test`. */
export async function approveWhenPending(client: Client, workflowId: string, what: string): Promise<void> {
  const pending = await waitForPendingApproval(client, workflowId, what);
  await approveStep(client, workflowId, { stepId: pending.stepId, digest: pending.digest, approver: 'test' });
}
