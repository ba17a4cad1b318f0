import type { Client } from '@temporalio/client';
import { getPendingApprovals, type PendingApproval } from '../../src/client/approval-client';
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
  const [pending] = await waitFor('the call to wait for approval', async () => {
    const found = await getPendingApprovals(client, handle.workflowId);
    return found.length > 0 ? found : undefined;
  });
  return { handle, pending: pending! };
}
