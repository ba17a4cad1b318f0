import { z } from 'zod';
import type { AgentRunInput, RunUsage } from '../../src/contract/agent-run-types';
import type { ModelSettings, ModelTurn } from '../../src/contract/model-types';
import type { ToolCatalogEntry } from '../../src/contract/tool-catalog-entry';
import { defineTool } from '../../src/tools/define-tool';
import type { FusedClearance } from '../../src/contract/fused-step';
import { planFusedCalls } from '../../src/workflows/fused-step-plan';
import { initialRunUsage, addTurnUsage } from '../../src/workflows/run-usage';
import { readTurn } from '../../src/workflows/turn-reading';
import { judgeTurn } from '../../src/workflows/turn-verdict';

/**
 * What the fused step's activity runs of a turn (fused-step-plan.ts): only calls the workflow would run as local
 * activities at once with the same input. The verdict is the workflow's own judgeTurn, checked here on many turns.
 */

const settings: ModelSettings = { provider: 'scripted' };
const EMPTY = { code: 'MODEL_EMPTY_RESPONSE', message: 'The model said nothing.' } as const;

function entryOf(
  name: string,
  effect: 'read-only' | 'irreversible' | 'compensable',
  more: { maxArgumentBytes?: number } = {},
): ToolCatalogEntry {
  return defineTool({
    name,
    description: `The ${name} tool.`,
    input: z.object({ n: z.number().optional(), text: z.string().optional() }),
    output: z.object({ ok: z.boolean() }),
    effect,
    approval: 'never',
    idempotent: effect === 'read-only',
    ...(effect === 'compensable' ? { undo: 'undo_it' } : {}),
    ...(more.maxArgumentBytes ? { budget: { maxArgumentBytes: more.maxArgumentBytes } } : {}),
  }).implement(async () => ({ ok: true })).contract.catalogEntry;
}

const read = entryOf('read_it', 'read-only');
const pay = entryOf('pay_it', 'irreversible');
const book = entryOf('book_it', 'compensable');
const small = entryOf('small_it', 'read-only', { maxArgumentBytes: 64 });

function clearance(fields: Partial<FusedClearance> = {}, verdict: Partial<FusedClearance['verdict']> = {}) {
  const base: FusedClearance = {
    verdict: {
      input: {},
      limits: { maxSteps: 50, maxTurns: 25 },
      usage: initialRunUsage(),
      turnNumber: 4,
      stepCount: 6,
      turnIssues: 0,
      ...verdict,
    },
    tools: [
      { entry: read, irreversible: false },
      { entry: pay, irreversible: true },
      { entry: book, irreversible: false },
      { entry: small, irreversible: false },
    ],
    firstStepId: 7,
    keys: ['run/7', 'run/8', 'run/9', 'run/10'],
    runKey: 'run',
    irreversibleDone: false,
  };
  return { ...base, ...fields };
}

function turnOf(names: string[], more: Partial<ModelTurn> = {}): ModelTurn {
  return {
    toolCalls: names.map((name, i) => ({ id: `c${i}`, name, arguments: { n: i } })),
    done: false,
    ...more,
  };
}

describe('the calls a fused step runs', () => {
  test('are the leading calls of pre-cleared tools, each with the input the workflow would give its activity', () => {
    expect(planFusedCalls(turnOf(['read_it', 'pay_it']), settings, clearance())).toEqual([
      { tool: 'read_it', input: { arguments: { n: 0 }, idempotencyKey: 'run/7', stepId: 7, runKey: 'run' } },
      { tool: 'pay_it', input: { arguments: { n: 1 }, idempotencyKey: 'run/8', stepId: 8, runKey: 'run' } },
    ]);
  });

  test('carry no run key for a run started before run-scoped keys', () => {
    const { runKey: _runKey, ...old } = clearance();
    expect(planFusedCalls(turnOf(['read_it']), settings, old)[0]!.input).not.toHaveProperty('runKey');
  });

  test('stop at the first call of a tool that is not pre-cleared', () => {
    expect(planFusedCalls(turnOf(['read_it', 'approve_me', 'read_it']), settings, clearance())).toHaveLength(1);
    expect(planFusedCalls(turnOf(['unknown_tool', 'read_it']), settings, clearance())).toEqual([]);
  });

  test('stop at a call whose arguments are over its tool budget', () => {
    const turn: ModelTurn = {
      toolCalls: [
        { id: 'a', name: 'small_it', arguments: { text: 'short' } },
        { id: 'b', name: 'small_it', arguments: { text: 'x'.repeat(200) } },
        { id: 'c', name: 'read_it', arguments: {} },
      ],
      done: false,
    };
    expect(planFusedCalls(turn, settings, clearance()).map((call) => call.input.stepId)).toEqual([7]);
  });

  test('stop at a compensable call after an unguarded irreversible one of the same turn', () => {
    expect(planFusedCalls(turnOf(['book_it', 'pay_it', 'book_it']), settings, clearance())).toHaveLength(2);
  });

  test('stop at a compensable call after an unguarded irreversible one earlier in the run', () => {
    expect(planFusedCalls(turnOf(['book_it']), settings, clearance({ irreversibleDone: true }))).toEqual([]);
  });

  test('are at most as many as the keys the workflow computed', () => {
    const names = Array.from({ length: 10 }, () => 'read_it');
    expect(planFusedCalls(turnOf(names), settings, clearance())).toHaveLength(4);
  });

  test('are none when the turn is an answer, an unusable turn, over the step limit or over the usage budget', () => {
    expect(planFusedCalls(turnOf([], { done: true, text: 'ok' }), settings, clearance())).toEqual([]);
    expect(planFusedCalls(turnOf(['read_it'], { done: true }), settings, clearance())).toEqual([]);
    expect(planFusedCalls(turnOf([], { issue: EMPTY }), settings, clearance())).toEqual([]);
    expect(planFusedCalls(turnOf(['read_it', 'read_it']), settings, clearance({}, { stepCount: 49 }))).toEqual([]);
    const budget = clearance({}, { input: { limits: { maxInputTokens: 100 } } });
    expect(planFusedCalls(turnOf(['read_it'], { usage: { inputTokens: 150 } }), settings, budget)).toEqual([]);
  });

  test('are planned only when judgeTurn says the turn runs its calls, on many turns', () => {
    const limits = [undefined, { maxInputTokens: 1_000 }, { maxOutputTokens: 50 }, { maxSteps: 9 }];
    const usages: RunUsage[] = [initialRunUsage(), { ...initialRunUsage(), inputTokens: 990, outputTokens: 40 }];
    const turns: ModelTurn[] = [];
    for (const count of [0, 1, 2, 3, 5, 40]) {
      for (const done of [false, true]) {
        for (const tokens of [undefined, 5, 20]) {
          turns.push(
            turnOf(
              Array.from({ length: count }, () => 'read_it'),
              {
                done,
                ...(tokens !== undefined ? { usage: { inputTokens: tokens, outputTokens: tokens } } : {}),
                ...(count === 0 && !done ? { issue: EMPTY } : {}),
              },
            ),
          );
        }
      }
    }
    let runs = 0;
    let none = 0;
    for (const limit of limits) {
      for (const usage of usages) {
        for (const stepCount of [0, 6, 8]) {
          for (const turnIssues of [0, 1]) {
            for (const turn of turns) {
              const input: Pick<AgentRunInput, 'limits'> = limit ? { limits: limit } : {};
              const runLimits = { maxSteps: limit && 'maxSteps' in limit ? limit.maxSteps! : 50, maxTurns: 25 };
              const given = clearance({}, { input, limits: runLimits, usage, stepCount, turnIssues });
              const after = structuredClone(usage);
              addTurnUsage(after, 4, turn, settings, undefined);
              const { verdict } = judgeTurn(turn, readTurn(turn), {
                input,
                limits: runLimits,
                usage: after,
                stepCount,
                turnIssues,
              });
              const planned = planFusedCalls(turn, settings, given);
              if (verdict.kind === 'run-calls') {
                expect(planned).toHaveLength(Math.min(readTurn(turn).calls.length, 4));
                runs += 1;
              } else {
                expect(planned).toEqual([]);
                none += 1;
              }
            }
          }
        }
      }
    }
    expect(runs).toBeGreaterThan(50);
    expect(none).toBeGreaterThan(50);
  });

  test('leave the usage the workflow passed unchanged', () => {
    const given = clearance();
    planFusedCalls(turnOf(['read_it'], { usage: { inputTokens: 10 } }), settings, given);
    expect(given.verdict.usage.inputTokens).toBe(0);
  });
});
