import type { RunApprovalPolicy } from '../contract/approval-types';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { undoToolNames } from '../contract/tool-visibility';
import { runOverride } from './approval-override';

/**
 * The rule for irreversible tools: an irreversible call needs approval, or must come after every
 * compensable step (once it has run unapproved, nothing before it can be undone, so no compensable step may
 * follow). Undo tools are exempt: they are the compensations. Whether a call was approved is known only
 * when it runs (a predicate may waive it): the tool step applies the rule to calls that ran unapproved.
 */
export function isIrreversibleForward(entry: ToolCatalogEntry, undoTools: ReadonlySet<string>): boolean {
  return entry.effect === 'irreversible' && !undoTools.has(entry.name);
}

/**
 * Whether calls of the tool may run without a human's approval in this run (for the warnings at start): its
 * approval is `never` or `conditional` (a predicate may waive it), unless the run requires it.
 */
export function isUnguardedIrreversible(
  entry: ToolCatalogEntry,
  undoTools: ReadonlySet<string>,
  policy: RunApprovalPolicy = {},
): boolean {
  if (!isIrreversibleForward(entry, undoTools)) return false;
  const override = runOverride(entry, policy);
  return override === 'never' || (override !== 'always' && entry.approval !== 'always');
}

/** Checks the catalog against the effect-tier rule at run start; returns warnings for the run state. */
export function checkEffectTiers(
  catalog: readonly ToolCatalogEntry[],
  visible: ReadonlySet<string>,
  policy: RunApprovalPolicy = {},
): string[] {
  const undoTools = undoToolNames(catalog);
  const warnings: string[] = [];
  const hasCompensable = catalog.some((entry) => visible.has(entry.name) && entry.effect === 'compensable');
  for (const entry of catalog) {
    if (!visible.has(entry.name)) continue;
    if (isUnguardedIrreversible(entry, undoTools, policy) && hasCompensable) {
      warnings.push(
        `Tool "${entry.name}" is irreversible and may run without approval: once it has, compensable tools are refused in this run.`,
      );
    }
    if (entry.undo && !catalog.some((other) => other.name === entry.undo)) {
      warnings.push(`Tool "${entry.name}" names "${entry.undo}" as its undo tool, but the worker does not have it.`);
    }
  }
  return warnings;
}
