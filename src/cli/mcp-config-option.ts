import { isAbsolute, resolve } from 'node:path';
import { loadMcpConfigFile, parseMcpConfig, type McpServersConfig } from '../mcp/client/mcp-config';
import type { McpServersConfigInput } from '../mcp/client/mcp-config';
import { stringOption, type ParsedValues } from './args';
import type { CliContext } from './command';

/** The environment variable naming an MCP servers configuration file (as for `durable-tools mcp`). */
export const MCP_CONFIG_ENV = 'DURABLE_TOOLS_MCP_CONFIG';

/** The option spec of `--mcp-config`. */
export const MCP_CONFIG_OPTION_SPEC = { 'mcp-config': { type: 'string' } } as const;

/** `--mcp-config` in a subcommand's help. */
export const MCP_CONFIG_OPTION_HELP = `  --mcp-config <file>  a {"mcpServers": ...} file whose servers' tools the worker also runs (default:
                  $${MCP_CONFIG_ENV}, else the tools module's \`mcp\` export)`;

/**
 * The MCP servers a worker command serves the tools of: the `--mcp-config` file, else the file
 * `DURABLE_TOOLS_MCP_CONFIG` names, else the tools module's `mcp` export; none when none is given. A file is read
 * and checked now (an `McpConfigError` before anything starts), relative to the working directory.
 */
export function mcpConfigOption(
  values: ParsedValues,
  context: CliContext,
  moduleExport: McpServersConfigInput | undefined,
): McpServersConfig | undefined {
  const file = stringOption(values, 'mcp-config') ?? (context.env[MCP_CONFIG_ENV] || undefined);
  if (file) return loadMcpConfigFile(isAbsolute(file) ? file : resolve(context.cwd, file));
  return moduleExport === undefined ? undefined : parseMcpConfig(moduleExport);
}
