import { checkEffectTiers, isUnguardedIrreversible } from '../../src/workflows/effect-tiers';
import type { ToolCatalogEntry } from '../../src/contract/tool-catalog-entry';
import { modelVisibleTools } from '../../src/contract/tool-visibility';

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
const invoice = entry('send_invoice', { effect: 'irreversible', approval: 'never' });
const refund = entry('refund', { effect: 'irreversible', approval: 'conditional' });
const catalog = [book, cancel, wire];

describe('effect tiers with the approval gate', () => {
  test("an irreversible tool with approval: 'always' is guarded: it may come before compensable steps", () => {
    expect(isUnguardedIrreversible(wire, new Set(['cancel']))).toBe(false);
    expect(checkEffectTiers(catalog, new Set(['book', 'wire_money']))).toEqual([]);
  });

  test("approval 'never' or a predicate leaves it unguarded, with a start-of-run warning", () => {
    expect(isUnguardedIrreversible(invoice, new Set())).toBe(true);
    expect(isUnguardedIrreversible(refund, new Set())).toBe(true);
    const warnings = checkEffectTiers([book, cancel, invoice], new Set(['book', 'send_invoice']));
    expect(warnings.join('\n')).toContain('"send_invoice" is irreversible and may run without approval');
  });

  test("a run that requires approval guards it; a run's waiver unguards it", () => {
    expect(isUnguardedIrreversible(invoice, new Set(), { tools: { send_invoice: 'always' } })).toBe(false);
    expect(isUnguardedIrreversible(wire, new Set(), { tools: { wire_money: 'never' } })).toBe(true);
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
