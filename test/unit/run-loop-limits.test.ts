import type { AgentRunInput } from '../../src/contract/agent-run-types';
import type { ModelTurn } from '../../src/contract/model-types';
import { AGENT_RUN_DEFAULTS } from '../../src/workflows/agent-run-defaults';
import { runLimits, stepLimitAbort, turnLimitAbort, usageBudgetAbort } from '../../src/workflows/run-limits';
import { initialRunUsage } from '../../src/workflows/run-usage';

const input = (fields: Partial<AgentRunInput> = {}): AgentRunInput => ({
  goal: 'Book a trip.',
  model: { provider: 'scripted' },
  ...fields,
});
const turn = (fields: Partial<ModelTurn> = {}): ModelTurn => ({ toolCalls: [], done: false, ...fields });
const usage = (inputTokens: number) => ({ ...initialRunUsage(), inputTokens });

describe('run limits', () => {
  test('a run without limits of its own takes the default turn and step limits', () => {
    expect(runLimits(input())).toEqual({
      maxSteps: AGENT_RUN_DEFAULTS.maxSteps,
      maxTurns: AGENT_RUN_DEFAULTS.maxTurns,
    });
  });

  test('a run may ask for another turn until it has taken its limit of turns', () => {
    expect(turnLimitAbort(2, { maxSteps: 10, maxTurns: 3 }, input())).toBeUndefined();
  });

  test('a run that has taken all its turns fails and compensates', () => {
    expect(turnLimitAbort(3, { maxSteps: 10, maxTurns: 3 }, input())).toEqual({
      status: 'failed',
      reason: 'The run reached its limit of 3 model turns.',
      compensate: true,
    });
  });

  test('a limit does not compensate when the failure policy says compensateOnLimit: false', () => {
    const abort = turnLimitAbort(
      3,
      { maxSteps: 10, maxTurns: 3 },
      input({ failurePolicy: { compensateOnLimit: false } }),
    );

    expect(abort?.compensate).toBe(false);
  });

  test('a turn whose calls would pass the tool-call limit ends the run before any of them runs', () => {
    expect(stepLimitAbort(8, 3, { maxSteps: 10, maxTurns: 5 }, input())?.reason).toBe(
      'The run reached its limit of 10 tool calls.',
    );
  });

  test('a turn whose calls reach the tool-call limit exactly still runs them', () => {
    expect(stepLimitAbort(8, 2, { maxSteps: 10, maxTurns: 5 }, input())).toBeUndefined();
  });

  test('a run over its token budget fails after a turn that asks for more work', () => {
    const abort = usageBudgetAbort(turn(), usage(500), input({ limits: { maxInputTokens: 100 } }));

    expect(abort).toMatchObject({ status: 'failed', compensate: true });
    expect(abort?.reason).toMatch(/limit of 100 input tokens/);
  });

  test('a clean final answer is accepted whatever it cost', () => {
    expect(
      usageBudgetAbort(turn({ done: true }), usage(500), input({ limits: { maxInputTokens: 100 } })),
    ).toBeUndefined();
  });

  test('an unusable final turn over the budget still ends the run on the budget', () => {
    const issue = { code: 'MODEL_REFUSED', message: 'No.' } as ModelTurn['issue'];

    expect(
      usageBudgetAbort(turn({ done: true, issue }), usage(500), input({ limits: { maxInputTokens: 100 } })),
    ).toBeDefined();
  });
});
