import { READ_STORED_OUTPUT_TOOL } from './claim-check-reference';
import type { ToolCatalogEntry } from './tool-catalog-entry';

/**
 * Which tools the model may see and call. Pure (no Node built-ins): the workflow and the model activity
 * both use it, so what the model is shown and what the workflow accepts never differ.
 */

/** Names of the tools that undo others. They run only as compensations, never as the model's tools. */
export function undoToolNames(catalog: readonly ToolCatalogEntry[]): Set<string> {
  return new Set(catalog.flatMap((entry) => (entry.undo ? [entry.undo] : [])));
}

/**
 * The catalog entries the model may see and call in a run: the run's `allowedTools` (all tools when not
 * given), in that order, plus the built-in `read_stored_output` when the worker has it, minus every undo tool, whatever `allowedTools` says. A model call naming an undo
 * tool is refused with `UNKNOWN_TOOL`: an undo with a made-up `originalKey` is not the model's to run.
 */
export function modelVisibleTools(
  catalog: readonly ToolCatalogEntry[],
  allowedTools?: readonly string[],
): ToolCatalogEntry[] {
  const undo = undoToolNames(catalog);
  const byName = new Map(catalog.map((entry) => [entry.name, entry]));
  // The built-in pager of stored outputs comes with every run whose worker has it.
  const names =
    allowedTools && !allowedTools.includes(READ_STORED_OUTPUT_TOOL)
      ? [...allowedTools, READ_STORED_OUTPUT_TOOL]
      : allowedTools;
  const chosen = names
    ? names.flatMap((name) => {
        const entry = byName.get(name);
        return entry ? [entry] : [];
      })
    : catalog;
  return chosen.filter((entry) => !undo.has(entry.name));
}
