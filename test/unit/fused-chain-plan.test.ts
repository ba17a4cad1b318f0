import { z } from 'zod';
import type { FusedChain, FusedClearance, FusedToolCall, TakenTurn } from '../../src/contract/fused-step';
import type { ModelSettings, ModelTurn, TranscriptMessage } from '../../src/contract/model-types';
import type { ToolCatalogEntry } from '../../src/contract/tool-catalog-entry';
import { defineTool } from '../../src/tools/define-tool';
import { planChainedTurn } from '../../src/workflows/fused-chain-plan';
import { initialRunUsage } from '../../src/workflows/run-usage';

/**
 * Chained turns (fused-chain-plan.ts): after a fused step's turn ran all its calls, whether the workflow would
 * certainly ask the next turn as a local fused step, and with what messages and clearance.
 */

const settings: ModelSettings = { provider: 'scripted' };

function entryOf(name: string, effect: 'read-only' | 'irreversible'): ToolCatalogEntry {
  return defineTool({
    name,
    description: `The ${name} tool.`,
    input: z.object({ n: z.number(), pin: z.string().meta({ sensitive: true }).optional() }),
    output: z.object({ echo: z.string() }),
    effect,
    approval: 'never',
    idempotent: effect === 'read-only',
  }).implement(async () => ({ echo: '' })).contract.catalogEntry;
}

const read = entryOf('read_it', 'read-only');
const pay = entryOf('pay_it', 'irreversible');

function chainOf(fields: Partial<FusedChain> = {}, generation: Partial<FusedChain['generation']> = {}): FusedChain {
  return {
    turnKeyPrefix: 'wf/r1/turn/',
    keyPrefix: 'wf/first',
    maxTurns: 16,
    budgetMs: 1_000,
    localCalls: 3,
    maxLocalCallsPerTask: 40,
    generation: { suggested: false, stepsThisGeneration: 2, transcriptBytes: 500, ...generation },
    ...fields,
  };
}

function clearanceOf(fields: Partial<FusedClearance> = {}, verdict: Partial<FusedClearance['verdict']> = {}) {
  const base: FusedClearance = {
    verdict: {
      input: {},
      limits: { maxSteps: 50, maxTurns: 25 },
      usage: initialRunUsage(),
      turnNumber: 2,
      stepCount: 2,
      turnIssues: 0,
      ...verdict,
    },
    tools: [
      { entry: read, irreversible: false },
      { entry: pay, irreversible: true },
    ],
    firstStepId: 3,
    keys: ['wf/first/3', 'wf/first/4', 'wf/first/5'],
    runKey: 'wf/first',
    irreversibleDone: false,
    chain: chainOf(),
  };
  return { ...base, ...fields };
}

const turnOf = (names: string[], more: Partial<ModelTurn> = {}): ModelTurn => ({
  text: 'Going on.',
  toolCalls: names.map((name, i) => ({ id: `c${i}`, name, arguments: { n: i } })),
  done: false,
  usage: { inputTokens: 10, outputTokens: 2 },
  ...more,
});

/** The calls of `turn` as the fused step ran them, all successful, from step `firstStepId`. */
function ranAll(turn: ModelTurn, firstStepId = 3): FusedToolCall[] {
  return (turn.toolCalls ?? []).map((call, i) => ({
    stepId: firstStepId + i,
    tool: String(call.name),
    idempotencyKey: `wf/first/${firstStepId + i}`,
    result: { output: { echo: `out ${i}` }, attempt: 1, argumentsDigest: `d${i}` },
  }));
}

function taken(turn: ModelTurn, fields: Partial<TakenTurn> = {}): TakenTurn {
  return {
    turn,
    clearance: clearanceOf(),
    position: { turn: 1, fromIndex: 3, messageCount: 2 },
    executed: ranAll(turn),
    ...fields,
  };
}

describe('the next turn of a chain', () => {
  test('sends the messages the workflow adds after the turn: the assistant message, then each observation', () => {
    const turn = turnOf(['read_it', 'pay_it']);
    const next = planChainedTurn(taken(turn), settings);
    const expected: TranscriptMessage[] = [
      {
        role: 'assistant',
        text: 'Going on.',
        toolCalls: [
          { id: 'c0', name: 'read_it', arguments: { n: 0 } },
          { id: 'c1', name: 'pay_it', arguments: { n: 1 } },
        ],
      },
      {
        role: 'tool',
        toolCallId: 'c0',
        name: 'read_it',
        stepId: 3,
        observation: { status: 'ok', output: { echo: 'out 0' } },
      },
      {
        role: 'tool',
        toolCallId: 'c1',
        name: 'pay_it',
        stepId: 4,
        observation: { status: 'ok', output: { echo: 'out 1' } },
      },
    ];
    expect(next).toMatchObject({ turn: 2, fromIndex: 5 });
    expect(next?.messages).toEqual(expected);
  });

  test('moves the clearance on: step ids and keys after the calls, the next turn, the usage, the local calls', () => {
    const next = planChainedTurn(taken(turnOf(['read_it', 'pay_it'])), settings);
    expect(next?.clearance).toMatchObject({
      firstStepId: 5,
      keys: ['wf/first/5', 'wf/first/6', 'wf/first/7'],
      irreversibleDone: true,
      verdict: { turnNumber: 3, stepCount: 4, turnIssues: 0, usage: { inputTokens: 10, outputTokens: 2, turns: [] } },
      chain: { localCalls: 6, generation: { stepsThisGeneration: 4 } },
    });
    const bytes = next!.clearance.chain!.generation.transcriptBytes;
    expect(bytes).toBe(500 + next!.messages.reduce((sum, m) => sum + Buffer.byteLength(JSON.stringify(m)), 0));
  });

  test('keeps a replayed call marked replayed and the sensitive arguments out of its observation', () => {
    const turn: ModelTurn = {
      toolCalls: [{ id: 'c0', name: 'read_it', arguments: { n: 1, pin: '4711' } }],
      done: false,
    };
    const executed = ranAll(turn);
    executed[0]!.result = { output: { echo: 'pin 4711' }, attempt: 1, replayed: true };
    const next = planChainedTurn(taken(turn, { executed }), settings);
    expect(next?.messages[1]).toMatchObject({ observation: { status: 'ok', replayed: true } });
    expect(JSON.stringify(next?.messages[1])).not.toContain('4711');
  });

  test('is none when a call of the turn did not run in the step (it failed, or was not pre-cleared)', () => {
    const turn = turnOf(['read_it', 'pay_it']);
    expect(planChainedTurn(taken(turn, { executed: ranAll(turn).slice(0, 1) }), settings)).toBeUndefined();
  });

  test('is none when a call ran under another step id or tool than the workflow gives it', () => {
    const turn = turnOf(['read_it']);
    expect(planChainedTurn(taken(turn, { executed: ranAll(turn, 4) }), settings)).toBeUndefined();
  });

  test('is none when the turn answers, is unusable, or goes past the step limit', () => {
    expect(planChainedTurn(taken(turnOf([], { done: true })), settings)).toBeUndefined();
    const empty = turnOf([], { issue: { code: 'MODEL_EMPTY_RESPONSE', message: 'nothing' } });
    expect(planChainedTurn(taken(empty), settings)).toBeUndefined();
    const overLimit = clearanceOf({}, { stepCount: 49 });
    const turn = turnOf(['read_it', 'read_it']);
    expect(planChainedTurn(taken(turn, { clearance: overLimit }), settings)).toBeUndefined();
  });

  test('is none when the next turn would not be local: the local calls in a row reach their bound', () => {
    const turn = turnOf(['read_it', 'read_it']);
    const bound = clearanceOf({ chain: chainOf({ localCalls: 37, maxLocalCallsPerTask: 39 }) });
    expect(planChainedTurn(taken(turn, { clearance: bound }), settings)).toBeUndefined();
    const room = clearanceOf({ chain: chainOf({ localCalls: 36, maxLocalCallsPerTask: 39 }) });
    expect(planChainedTurn(taken(turn, { clearance: room }), settings)).toBeDefined();
  });

  test('is none when the run has taken all its turns', () => {
    const last = clearanceOf({}, { turnNumber: 25 });
    expect(planChainedTurn(taken(turnOf(['read_it']), { clearance: last }), settings)).toBeUndefined();
  });

  test('is none when the generation would continue as new before the next turn', () => {
    const turn = turnOf(['read_it']);
    const suggested = clearanceOf({ chain: chainOf({}, { suggested: true }) });
    expect(planChainedTurn(taken(turn, { clearance: suggested }), settings)).toBeUndefined();
    const everySteps = clearanceOf({ chain: chainOf({}, { everySteps: 3, stepsThisGeneration: 2 }) });
    expect(planChainedTurn(taken(turn, { clearance: everySteps }), settings)).toBeUndefined();
    const bytes = clearanceOf({ chain: chainOf({}, { transcriptBytes: 10 * 1024 * 1024 }) });
    expect(planChainedTurn(taken(turn, { clearance: bytes }), settings)).toBeUndefined();
  });

  test('is none when the clearance offers no chain', () => {
    const turn = turnOf(['read_it']);
    const { chain: _none, ...unchained } = clearanceOf();
    expect(planChainedTurn(taken(turn, { clearance: unchained }), settings)).toBeUndefined();
  });
});
