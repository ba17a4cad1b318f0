import type { ToolCatalogEntry } from '../tools/tool-catalog-entry';
import { undoToolNames } from '../tools/tool-visibility';

/**
 * Whether a human approval guards this tool's calls, exempting it from the tier rule below.
 *
 * INTERIM (issue 8, until the approval gate of issue 12 exists): nothing enforces `approval: 'always'` yet,
 * so it guards nothing and an irreversible tool that asks for approval is treated as irreversible WITHOUT
 * approval. The approval gate makes this `entry.approval === 'always'` once it really waits for a human.
 */
export function approvalGuards(entry: ToolCatalogEntry): boolean {
  void entry;
  return false;
}

/**
 * The rule for irreversible tools: an irreversible tool needs approval, or must come after every
 * compensable step (once it has run, nothing before it can be undone, so no compensable step may follow).
 * Undo tools are exempt: they are the compensations.
 */
export function isUnguardedIrreversible(entry: ToolCatalogEntry, undoTools: ReadonlySet<string>): boolean {
  return entry.effect === 'irreversible' && !approvalGuards(entry) && !undoTools.has(entry.name);
}

/** Checks the catalog against the effect-tier rule at run start; returns warnings for the run state. */
export function checkEffectTiers(catalog: readonly ToolCatalogEntry[], visible: ReadonlySet<string>): string[] {
  const undoTools = undoToolNames(catalog);
  const warnings: string[] = [];
  const hasCompensable = catalog.some((entry) => visible.has(entry.name) && entry.effect === 'compensable');
  for (const entry of catalog) {
    if (!visible.has(entry.name)) continue;
    if (isUnguardedIrreversible(entry, undoTools) && hasCompensable) {
      warnings.push(
        `Tool "${entry.name}" is irreversible and no approval guards it: once it has run, compensable tools are refused in this run.`,
      );
    }
    if (entry.undo && !catalog.some((other) => other.name === entry.undo)) {
      warnings.push(`Tool "${entry.name}" names "${entry.undo}" as its undo tool, but the worker does not have it.`);
    }
  }
  return warnings;
}
