import { FAST_PATH_LIMITS } from '../contract/fast-path';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';

/**
 * Whether a tool call past its gates may run as a local activity (docs/fast-path.md): the rule of
 * `toolRunsLocally` (fast-path.ts), without counting the call. Pure, and nothing here imports
 * `@temporalio/workflow`: the fused step pre-clears with it, in the workflow and in its activity
 * (fused-clearance.ts).
 *
 * A call qualifies when it is short (an attempt timeout the engine would not heartbeat: at most
 * {@link FAST_PATH_LIMITS.maxToolTimeoutMs}) and needs nothing a local activity lacks: no long call (heartbeats,
 * checkpoints), no async job (a callback), no approval (a human's decision already ended the workflow task), and
 * no `execution: 'activity'` of its own. A read-only tool declared `execution: 'local'` runs locally whatever the
 * run says.
 */
export function qualifiesLocally(
  fast: { readonly on: boolean } | undefined,
  entry: ToolCatalogEntry,
  approved: boolean,
): boolean {
  if (entry.execution === 'local') return true;
  return (
    fast?.on === true &&
    entry.execution !== 'activity' &&
    !approved &&
    entry.longCall === undefined &&
    entry.asyncJob === undefined &&
    // A call under limits waits for its slot, visibly, in a regular activity (docs/limits.md).
    entry.limits === undefined &&
    entry.timeoutMs <= FAST_PATH_LIMITS.maxToolTimeoutMs
  );
}
