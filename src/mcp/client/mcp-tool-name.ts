import { createHash } from 'node:crypto';

/** Separator between the server name and the tool name in a namespaced tool name. */
export const MCP_NAME_SEPARATOR = '__';

/** The longest tool name model APIs accept. */
const MAX_TOOL_NAME = 64;

/**
 * The catalog name (and Temporal activity type) of an MCP tool: `${server}__${tool}`, e.g. `everything__get-sum`.
 * It is a valid function name for the major model APIs (`^[a-zA-Z0-9_-]{1,64}$`):
 * - server names may not contain `_`, so the first `__` always separates the two parts;
 * - characters a model API refuses (`.`, `/`, spaces, …) become `_`;
 * - a name longer than 64 characters is cut and ends with `_` and 8 hex digits of the SHA-256 of the MCP tool
 *   name, so two long names stay distinct; `salt` (used on a collision) changes that digest.
 *
 * @example
 * ```ts
 * mcpToolName('github', 'create_issue'); // 'github__create_issue'
 * mcpToolName('fs', 'read.file');        // 'fs__read_file'
 * ```
 */
export function mcpToolName(server: string, tool: string, salt = ''): string {
  const plain = `${server}${MCP_NAME_SEPARATOR}${tool.replace(/[^a-zA-Z0-9_-]/g, '_')}`;
  if (plain.length <= MAX_TOOL_NAME && salt === '') return plain;
  const digest = createHash('sha256').update(`${tool}${salt}`).digest('hex').slice(0, 8);
  return `${plain.slice(0, MAX_TOOL_NAME - digest.length - 1)}_${digest}`;
}
