import { WorkflowFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { getAgentRunState } from '../../src/client/agent-run-client';
import { ApplicationFailure } from '@temporalio/common';
import type { AgentRunResult, AgentRunState } from '../../src/contract/agent-run-types';

/**
 * The result of an agent run whether it returns its result or ends as a Failed workflow carrying the
 * result in its failure's details (type = the run status).
 */
export async function agentRunOutcome(handle: WorkflowHandle): Promise<AgentRunResult> {
  try {
    return (await handle.result()) as AgentRunResult;
  } catch (error) {
    const cause = error instanceof WorkflowFailedError ? error.cause : undefined;
    if (cause instanceof ApplicationFailure && cause.details?.[0] && typeof cause.details[0] === 'object') {
      return cause.details[0] as AgentRunResult;
    }
    throw error;
  }
}

/**
 * Cancels a run and waits for it to end: the error its result rejects with (undefined if it did not) and the
 * run's state after it.
 */
export async function cancelAndWait(
  client: Client,
  handle: WorkflowHandle,
): Promise<{ error: unknown; state: AgentRunState }> {
  await handle.cancel();
  const error = await handle.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, state: await getAgentRunState(client, handle.workflowId) };
}

/** Size of the largest payload in a history (bytes of any one event's payloads together). */
export function largestEventPayloadBytes(history: { events?: readonly unknown[] | null }): number {
  let largest = 0;
  for (const event of history.events ?? []) largest = Math.max(largest, payloadBytes(event, 0));
  return largest;
}

function payloadBytes(value: unknown, depth: number): number {
  if (value instanceof Uint8Array) return value.byteLength;
  if (value === null || typeof value !== 'object' || depth > 30) return 0;
  let total = 0;
  for (const child of Object.values(value as Record<string, unknown>)) total += payloadBytes(child, depth + 1);
  return total;
}
