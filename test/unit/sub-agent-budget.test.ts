import type { AgentRunInput, AgentRunState } from '../../src/contract/agent-run-types';
import { initialRunUsage } from '../../src/workflows/run-usage';
import { carveSubAgentLimits, chargeSubAgent } from '../../src/workflows/sub-agent-budget';

function parentState(more: Partial<AgentRunState> = {}): AgentRunState {
  return {
    workflowId: 'parent',
    runId: 'parent',
    goal: 'g',
    status: 'running',
    turns: 1,
    stepCount: 3,
    generation: 0,
    steps: [],
    policyWarnings: [],
    usage: initialRunUsage(),
    ...more,
  };
}

const input = (limits: AgentRunInput['limits']): AgentRunInput => ({
  goal: 'g',
  model: { provider: 'scripted' },
  limits,
});

describe('carving a sub-agent budget out of its parent', () => {
  test('the child gets the smaller of its own step limit and the steps the parent has left', () => {
    const parent = { input: input({ maxSteps: 10 }), limits: { maxSteps: 10, maxTurns: 25 }, state: parentState() };
    expect(carveSubAgentLimits({ maxSteps: 20 }, parent)).toEqual({ limits: { maxSteps: 7, maxTurns: 25 } });
    expect(carveSubAgentLimits({ maxSteps: 2 }, parent)).toEqual({ limits: { maxSteps: 2, maxTurns: 25 } });
  });

  test("earlier children's tool calls count against what the parent has left", () => {
    const state = parentState({ subAgentSteps: 5 });
    const parent = { input: input({ maxSteps: 10 }), limits: { maxSteps: 10, maxTurns: 25 }, state };
    expect(carveSubAgentLimits(undefined, parent)).toEqual({ limits: { maxSteps: 2, maxTurns: 25 } });
  });

  test("tokens and cost left to the parent cap the child's, and are the child's when it sets none", () => {
    const state = parentState({ usage: { ...initialRunUsage(), inputTokens: 600, outputTokens: 100, cost: 0.25 } });
    const parent = {
      input: input({ maxInputTokens: 1_000, maxOutputTokens: 500, maxCost: 1 }),
      limits: { maxSteps: 50, maxTurns: 25 },
      state,
    };
    expect(carveSubAgentLimits({ maxInputTokens: 300 }, parent)).toEqual({
      limits: { maxSteps: 47, maxTurns: 25, maxInputTokens: 300, maxOutputTokens: 400, maxCost: 0.75 },
    });
  });

  test('a parent with nothing left of a budget starts no child, and says which budget is spent', () => {
    const state = parentState({ usage: { ...initialRunUsage(), outputTokens: 500 } });
    const parent = { input: input({ maxOutputTokens: 500 }), limits: { maxSteps: 3, maxTurns: 25 }, state };
    expect(carveSubAgentLimits(undefined, parent)).toEqual({
      exhausted: 'The run has used all its tool calls (3), output tokens (500).',
    });
  });

  test("a finished child's tokens, cost and tool calls (its own children's too) are charged to the parent", () => {
    const state = parentState({ usage: { ...initialRunUsage(), inputTokens: 10, cost: 0.5 }, subAgentSteps: 1 });
    const child = parentState({
      stepCount: 4,
      subAgentSteps: 2,
      usage: { ...initialRunUsage(), inputTokens: 100, outputTokens: 20, cost: 0.25, unpricedTurns: 1 },
    });
    chargeSubAgent(state, child);
    expect(state.usage).toMatchObject({ inputTokens: 110, outputTokens: 20, cost: 0.75, unpricedTurns: 1 });
    expect(state.subAgentSteps).toBe(7);
  });
});
