import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { AgentRunResult } from '../../src/contract/agent-run-types';

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
