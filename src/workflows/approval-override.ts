import type { RunApprovalPolicy } from '../contract/approval-types';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';

/*
 * What a run's approval policy says of a tool before any call of it (approval-gate.ts asks, the fused step
 * pre-clears). Pure, and nothing here imports `@temporalio/workflow`: the fused step's activity decides with it
 * too (fused-clearance.ts).
 */

/**
 * Whether the gate opens for every call of the tool without asking anyone (no activity, no wait): the tool
 * never needs approval and the run does not demand it. The fused step pre-clears only such tools.
 */
export function opensAtOnce(entry: ToolCatalogEntry, policy: RunApprovalPolicy): boolean {
  return entry.approval === 'never' && runOverride(entry, policy) !== 'always';
}

/** The run's own word on a tool: its per-tool override, or `'always'` for effects under `requireForEffects`. */
export function runOverride(entry: ToolCatalogEntry, policy: RunApprovalPolicy): 'always' | 'never' | undefined {
  const own = policy.tools?.[entry.name];
  if (own === 'always' || own === 'never') return own;
  return policy.requireForEffects && entry.effect !== 'read-only' ? 'always' : undefined;
}
