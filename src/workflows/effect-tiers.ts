import type { ToolCatalogEntry } from '../tools/tool-catalog-entry';

/**
 * The rule for irreversible tools: an irreversible tool needs approval, or must come after every
 * compensable step (once it has run, nothing before it can be undone, so no compensable step may follow).
 * Undo tools are exempt: they are the compensations.
 */
export function isUnguardedIrreversible(entry: ToolCatalogEntry, undoTools: ReadonlySet<string>): boolean {
  return entry.effect === 'irreversible' && entry.approval === 'never' && !undoTools.has(entry.name);
}

/** Names of the tools that undo others. */
export function undoToolNames(catalog: readonly ToolCatalogEntry[]): Set<string> {
  return new Set(catalog.flatMap((entry) => (entry.undo ? [entry.undo] : [])));
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
        `Tool "${entry.name}" is irreversible and needs no approval: once it has run, compensable tools are refused in this run.`,
      );
    }
    if (entry.undo && !catalog.some((other) => other.name === entry.undo)) {
      warnings.push(`Tool "${entry.name}" names "${entry.undo}" as its undo tool, but the worker does not have it.`);
    }
  }
  return warnings;
}
