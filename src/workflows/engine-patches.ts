import { patched } from '@temporalio/workflow';
import type { AgentRunInput } from '../contract/agent-run-types';
import { fastPathAsked } from '../contract/fast-path';

/**
 * The one `patched()` id a run started since 2026-12-04 records in place of the engine's earlier patches
 * (`durable-tools/run-scoped-keys`, `fast-path-patches-first`, `fast-path`, `fast-path-local-catalog`,
 * `fast-path-fused`, `fast-path-chained`), which it implies: each patch is a marker and an upsert of Temporal's
 * `TemporalChangeVersion` search attribute in history (two events, a visibility update), six of each per fast-path
 * run before it. Evaluated first in a generation; a history without it replays the earlier patches as recorded.
 */
export const ENGINE_2026_12_PATCH = 'durable-tools/engine-2026-12';

/**
 * Whether this generation takes the engine's behaviour as of {@link ENGINE_2026_12_PATCH} without recording its
 * earlier patches one by one. Evaluated first, and only by a generation that would evaluate one of them: one
 * that asks for the fast path, or the first generation of a run that is not a sub-agent (run-scoped keys). False
 * for a history from before it.
 */
export function currentEngine(input: AgentRunInput): boolean {
  const evaluatesPatches = fastPathAsked(input.fastPath) || (!input.carriedOver && !input.subAgent);
  return evaluatesPatches && patched(ENGINE_2026_12_PATCH);
}

/**
 * An earlier patch of the engine: implied when the generation is `current` ({@link currentEngine}), else
 * `patched(patchId)` as a history from before the one patch recorded it.
 */
export function patchedBefore(current: boolean, patchId: string): boolean {
  return current || patched(patchId);
}
