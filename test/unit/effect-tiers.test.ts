import { checkEffectTiers, isUnguardedIrreversible } from '../../src/workflows/effect-tiers';
import type { ToolCatalogEntry } from '../../src/tools/tool-catalog-entry';
import { modelVisibleTools } from '../../src/tools/tool-visibility';

function entry(name: string, fields: Partial<ToolCatalogEntry>): ToolCatalogEntry {
  return {
    name,
    description: name,
    inputSchema: {},
    outputSchema: {},
    effect: 'read-only',
    idempotent: true,
    approval: 'never',
    retry: { maximumAttempts: 3, initialDelayMs: 200, maxDelayMs: 10_000, jitter: 'full', totalDeadlineMs: 120_000 },
    timeoutMs: 30_000,
    ...fields,
  };
}

const book = entry('book', { effect: 'compensable', undo: 'cancel' });
const cancel = entry('cancel', { effect: 'irreversible' });
const wire = entry('wire_money', { effect: 'irreversible', approval: 'always' });
const catalog = [book, cancel, wire];

describe('effect tiers until the approval gate exists', () => {
  test("an irreversible tool with approval: 'always' counts as irreversible without approval", () => {
    expect(isUnguardedIrreversible(wire, new Set(['cancel']))).toBe(true);
  });

  test('it gets the same start-of-run warning as any unguarded irreversible tool', () => {
    const warnings = checkEffectTiers(catalog, new Set(['book', 'wire_money']));
    expect(warnings.join('\n')).toContain('"wire_money" is irreversible and no approval guards it');
  });

  test('undo tools stay exempt: they are the compensations', () => {
    expect(isUnguardedIrreversible(cancel, new Set(['cancel']))).toBe(false);
  });
});

describe('the tools the model may see', () => {
  test('leave out every undo tool, with or without allowedTools', () => {
    expect(modelVisibleTools(catalog).map((e) => e.name)).toEqual(['book', 'wire_money']);
    expect(modelVisibleTools(catalog, ['cancel', 'book']).map((e) => e.name)).toEqual(['book']);
  });

  test('follow the order of allowedTools and skip unknown names', () => {
    expect(modelVisibleTools(catalog, ['wire_money', 'nope', 'book']).map((e) => e.name)).toEqual([
      'wire_money',
      'book',
    ]);
  });
});
