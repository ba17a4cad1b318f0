import { agentRunStateOf } from '../../src/client/agent-run-state-of';
import type { AgentRunState } from '../../src/contract/agent-run-types';

describe('agentRunStateOf', () => {
  test('gives a state from a worker before workflowId its workflow id, from the old runId', () => {
    const old = { runId: 'order-42', goal: 'g', status: 'completed' } as unknown as AgentRunState;
    expect(agentRunStateOf(old)).toMatchObject({ workflowId: 'order-42', runId: 'order-42' });
  });

  test('leaves a state that has its workflowId as it is', () => {
    const state = { workflowId: 'order-42', runId: 'order-42', goal: 'g' } as unknown as AgentRunState;
    expect(agentRunStateOf(state)).toBe(state);
  });
});
