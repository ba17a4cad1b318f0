import { z } from 'zod';
import type { ToolCatalogEntry } from '../../src/contract/tool-catalog-entry';
import { defineTool } from '../../src/tools/define-tool';
import type { FastPath } from '../../src/workflows/fast-path';

/** The catalog entry of an irreversible tool that needs no approval: a call the fast path runs locally. */
export const PAY_ENTRY: ToolCatalogEntry = defineTool({
  name: 'pay',
  description: 'Pays. Do not use to read balances.',
  input: z.object({ amount: z.number() }),
  output: z.object({ id: z.string() }),
  effect: 'irreversible',
  approval: 'never',
  idempotent: false,
}).implement(async () => ({ id: 'p1' })).contract.catalogEntry;

/** A run's fast path, on with fused steps (chained) and no local call yet, changed by `fields`. */
export function fastPathState(fields: Partial<FastPath> = {}): FastPath {
  return {
    on: true,
    modelTurns: true,
    fused: true,
    chained: true,
    chainBudgetMs: 1_000,
    maxLocalCallsPerTask: 40,
    localCalls: 0,
    ...fields,
  };
}
