import type { Tool } from './define-tool';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { ToolDefinitionError } from '../contract/tool-definition-error';

/**
 * The tools one worker can run, by name. Produces the JSON catalog the workflow and the model read.
 */
export interface ToolRegistry {
  /** The tool with this name, or undefined. */
  get(name: string): Tool | undefined;
  has(name: string): boolean;
  /** All tools, in registration order. */
  list(): readonly Tool[];
  /** The JSON catalog of all tools (or of the named ones, in the order given; unknown names are skipped). */
  catalog(names?: readonly string[]): ToolCatalogEntry[];
  /**
   * Brings a registry whose tools come from elsewhere (MCP servers) up to date; `describeTools` calls it before it
   * reads the catalog. A registry of fixed tools has none.
   */
  refresh?(): Promise<void>;
}

/**
 * Builds a registry and checks it as a whole: names are unique and every `undo` names a registered tool
 * that is not read-only.
 *
 * @example
 * ```ts
 * const registry = createToolRegistry([searchFlights, bookFlight, cancelFlight]);
 * registry.catalog(); // [{ name: 'search_flights', inputSchema: {...}, ... }, ...]
 * ```
 */
export function createToolRegistry(tools: readonly Tool[]): ToolRegistry {
  const byName = new Map<string, Tool>();
  for (const tool of tools) {
    const name = tool.contract.name;
    if (byName.has(name)) {
      throw new ToolDefinitionError(`Tool "${name}" is registered twice.`, 'DUPLICATE_TOOL');
    }
    byName.set(name, tool);
  }
  for (const tool of tools) {
    const undo = tool.contract.catalogEntry.undo;
    if (undo !== undefined && !byName.has(undo)) {
      throw new ToolDefinitionError(
        `Tool "${tool.contract.name}" names "${undo}" as its undo tool, but no such tool is registered.`,
        'UNKNOWN_UNDO',
      );
    }
    if (undo !== undefined && byName.get(undo)?.contract.catalogEntry.effect === 'read-only') {
      throw new ToolDefinitionError(
        `Tool "${tool.contract.name}" names "${undo}" as its undo tool, but "${undo}" is read-only and cannot reverse anything: declare its real effect ("irreversible" or "compensable") or name another undo tool.`,
        'INVALID_UNDO',
      );
    }
  }
  const ordered = Object.freeze([...byName.values()]);
  return Object.freeze({
    get: (name: string) => byName.get(name),
    has: (name: string) => byName.has(name),
    list: () => ordered,
    catalog: (names?: readonly string[]) =>
      (names ?? ordered.map((t) => t.contract.name))
        .map((name) => byName.get(name)?.contract.catalogEntry)
        .filter((entry): entry is ToolCatalogEntry => entry !== undefined),
  });
}
