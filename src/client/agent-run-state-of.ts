import type { AgentRunState } from '../contract/agent-run-types';

/**
 * A run's state with `workflowId` set: a worker from before `workflowId` (its query answers, and the results
 * it recorded) has only the deprecated `runId`, which holds the same workflow id.
 */
export function agentRunStateOf<S extends AgentRunState>(state: S): S {
  const { workflowId, runId } = state as S & { workflowId?: string };
  return workflowId === undefined ? { ...state, workflowId: runId } : state;
}
