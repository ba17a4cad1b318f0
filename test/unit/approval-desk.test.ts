import type { AgentRunState, StepRecord } from '../../src/contract/agent-run-types';
import type { ApprovalDecisionInput } from '../../src/contract/approval-types';
import { routeDecision } from '../../src/workflows/approval-desk';
import type { ApprovalGate } from '../../src/workflows/approval-gate';

const step = (stepId: number, tool: string): StepRecord => ({
  stepId,
  turn: 0,
  toolCallId: `${stepId}`,
  tool,
  arguments: {},
  idempotencyKey: `wf/run/${stepId}`,
  status: 'awaiting_approval',
});

/** A gate with the given calls waiting (step id → digest) and the given steps known. */
function gate(waiting: Record<number, string>, known: StepRecord[] = []): ApprovalGate {
  return {
    workflowId: 'wf',
    policy: {},
    track: false,
    state: { steps: known } as unknown as AgentRunState,
    waiting: new Map(
      Object.entries(waiting).map(([id, digest]) => [Number(id), { step: step(Number(id), 't'), digest }]),
    ),
  };
}

const decision = (stepId: number, digest: string): ApprovalDecisionInput => ({
  stepId,
  digest,
  decision: 'approve',
  approver: 'alice',
});

describe('the approval desk of a workflow', () => {
  it('routes a decision to the gate whose call of that step waits with that digest', () => {
    const calls = gate({ 1: 'aaa' });
    const agent = gate({ 1: 'bbb' });
    expect(routeDecision({ gates: [calls, agent] }, decision(1, 'aaa'))).toBe(calls);
    expect(routeDecision({ gates: [calls, agent] }, decision(1, 'bbb'))).toBe(agent);
  });

  it('routes a decision with a wrong digest to a gate where that step waits (which refuses the digest)', () => {
    const calls = gate({ 2: 'aaa' });
    const agent = gate({});
    expect(routeDecision({ gates: [calls, agent] }, decision(2, 'zzz'))).toBe(calls);
  });

  it('routes a decision for a step nobody waits for to the newest gate that knows the step, else the newest', () => {
    const calls = gate({}, [step(3, 'send_notice')]);
    const agent = gate({});
    expect(routeDecision({ gates: [calls, agent] }, decision(3, 'aaa'))).toBe(calls);
    expect(routeDecision({ gates: [calls, agent] }, decision(9, 'aaa'))).toBe(agent);
  });
});
