import { subAgentApprovalLine, subAgentApprovalWaits } from '../../src/cli/sub-agent-approvals';
import type { AgentRunState, StepRecord } from '../../src/contract/agent-run-types';

function step(stepId: number, fields: Partial<StepRecord>): StepRecord {
  return {
    stepId,
    turn: 1,
    toolCallId: `call-${stepId}`,
    tool: 'tool',
    arguments: {},
    idempotencyKey: `run/${stepId}`,
    status: 'succeeded',
    ...fields,
  };
}

function run(workflowId: string, steps: StepRecord[]): AgentRunState {
  return {
    workflowId,
    runId: workflowId,
    goal: 'goal',
    status: 'running',
    turns: 1,
    stepCount: steps.length,
    generation: 0,
    steps,
    policyWarnings: [],
    usage: { inputTokens: 0, outputTokens: 0, unreportedTurns: 0, unpricedTurns: 0, turns: [] },
  };
}

const states = new Map<string, AgentRunState>([
  ['child', run('child', [step(1, {}), step(2, { status: 'awaiting_approval', tool: 'pay' })])],
  ['grandchild-parent', run('grandchild-parent', [step(1, { status: 'running', childWorkflowId: 'grandchild' })])],
  ['grandchild', run('grandchild', [step(4, { status: 'awaiting_approval', tool: 'refund' })])],
]);
const read = async (id: string) => states.get(id);

describe("the run watcher's sub-agent approvals", () => {
  test("finds a running sub-agent's call that waits for approval, under the parent's step", async () => {
    const parent = run('parent', [step(3, { status: 'running', tool: 'booker', childWorkflowId: 'child' })]);
    await expect(subAgentApprovalWaits(parent, read)).resolves.toEqual([
      { parentStep: 3, workflowId: 'child', stepId: 2, tool: 'pay' },
    ]);
  });

  test('looks into a sub-agent of a sub-agent', async () => {
    const parent = run('parent', [step(5, { status: 'running', childWorkflowId: 'grandchild-parent' })]);
    await expect(subAgentApprovalWaits(parent, read)).resolves.toEqual([
      { parentStep: 5, workflowId: 'grandchild', stepId: 4, tool: 'refund' },
    ]);
  });

  test('skips finished agent steps and children that do not answer', async () => {
    const parent = run('parent', [
      step(1, { status: 'succeeded', childWorkflowId: 'child' }),
      step(2, { status: 'running', childWorkflowId: 'gone' }),
    ]);
    await expect(subAgentApprovalWaits(parent, read)).resolves.toEqual([]);
  });

  test('names the command that decides, with --approver when USER is unset', () => {
    const wait = { parentStep: 3, workflowId: 'child', stepId: 2, tool: 'pay' };
    expect(subAgentApprovalLine(wait, 'durable-tools', { USER: 'ana' })).toBe(
      '  step 3  ⏸ sub-agent child waits for approval of its step 2 (pay): durable-tools approve child 2',
    );
    expect(subAgentApprovalLine(wait, 'durable-tools', {})).toMatch(/approve child 2 --approver <your name>$/);
  });
});
