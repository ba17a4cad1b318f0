import type { ModelTurn } from '../../src/contract/model-types';
import { addTurnUsage, initialRunUsage, pricesFor, usageLimitReason, usageTotals } from '../../src/workflows/run-usage';

const turn = (inputTokens: number, outputTokens: number, modelId?: string): ModelTurn => ({
  toolCalls: [],
  done: false,
  usage: { inputTokens, outputTokens },
  ...(modelId ? { modelId } : {}),
});

describe('run usage', () => {
  test('adds up every turn and keeps per-turn entries', () => {
    const usage = initialRunUsage();
    addTurnUsage(usage, 1, turn(100, 10), { provider: 'openai' }, undefined);
    addTurnUsage(usage, 2, turn(200, 20), { provider: 'openai' }, undefined);
    expect(usage).toMatchObject({ inputTokens: 300, outputTokens: 30, unreportedTurns: 0 });
    expect(usage.turns.map((t) => t.turn)).toEqual([1, 2]);
  });

  test('carries totals over continue-as-new', () => {
    const usage = initialRunUsage();
    addTurnUsage(usage, 1, turn(100, 10), { provider: 'openai' }, undefined);
    expect(initialRunUsage(usageTotals(usage))).toMatchObject({ inputTokens: 100, outputTokens: 10, turns: [] });
  });

  test('counts turns whose provider reports no usage', () => {
    const usage = initialRunUsage();
    addTurnUsage(usage, 1, { toolCalls: [], done: true }, { provider: 'scripted' }, undefined);
    expect(usage.unreportedTurns).toBe(1);
  });

  test('prices a turn by model id, by prefix and by the wildcard, cached input at its own price', () => {
    const table = {
      'gpt-4.1-mini': { inputPerMillionTokens: 0.4, outputPerMillionTokens: 1.6, cachedInputPerMillionTokens: 0.1 },
      '*': { inputPerMillionTokens: 10, outputPerMillionTokens: 10 },
    };
    expect(pricesFor(table, 'gpt-4.1-mini-2025-04-14', undefined)).toBe(table['gpt-4.1-mini']);
    expect(pricesFor(table, 'other', undefined)).toBe(table['*']);
    const usage = initialRunUsage();
    const entry = addTurnUsage(
      usage,
      1,
      {
        toolCalls: [],
        done: false,
        usage: { inputTokens: 1_000_000, outputTokens: 1_000_000, cachedInputTokens: 500_000 },
        modelId: 'gpt-4.1-mini-2025',
      },
      { provider: 'openai' },
      table,
    );
    expect(entry.cost).toBeCloseTo(0.5 * 0.4 + 0.5 * 0.1 + 1.6);
  });

  test('the token limits stop the run once reached', () => {
    const usage = initialRunUsage();
    addTurnUsage(usage, 1, turn(100, 10), { provider: 'openai' }, undefined);
    expect(usageLimitReason(usage, { maxInputTokens: 101 })).toBeUndefined();
    expect(usageLimitReason(usage, { maxInputTokens: 100 })).toContain('100 input tokens');
    expect(usageLimitReason(usage, { maxOutputTokens: 10 })).toContain('10 output tokens');
  });

  test('the cost limit stops the run, and cannot be met silently when a model has no price', () => {
    const table = { m: { inputPerMillionTokens: 1_000, outputPerMillionTokens: 0 } };
    const usage = initialRunUsage();
    addTurnUsage(usage, 1, turn(1_000, 0, 'm'), { provider: 'openai' }, table);
    expect(usageLimitReason(usage, { maxCost: 2 })).toBeUndefined();
    addTurnUsage(usage, 2, turn(1_000, 0, 'm'), { provider: 'openai' }, table);
    expect(usageLimitReason(usage, { maxCost: 2 })).toContain('cost limit of 2');
    const unpriced = initialRunUsage();
    addTurnUsage(unpriced, 1, turn(1, 1, 'unknown'), { provider: 'openai' }, table);
    expect(usageLimitReason(unpriced, { maxCost: 2 })).toContain('no price');
  });
});
