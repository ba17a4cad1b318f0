import { createHash } from 'node:crypto';
import { basename, extname, resolve } from 'node:path';

/** What an MCP server name (`--name`) may look like. */
export const MCP_SERVER_NAME_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The name a `durable-tools mcp` server gets without `--name`: the tools module's base name and 8 hex digits of
 * SHA-256 over the resolved tools module and MCP config paths, e.g. `trip-tools-3f9a12bc`. Two servers of other tools
 * get other names, so other task queues and caller scopes; restarting a server keeps its name.
 */
export function defaultMcpServerName(toolsModule: string, mcpConfigPath: string | undefined): string {
  const tools = resolve(toolsModule);
  const stem = basename(tools, extname(tools))
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .slice(0, 40);
  const digest = createHash('sha256')
    .update(JSON.stringify([tools, mcpConfigPath ? resolve(mcpConfigPath) : null]))
    .digest('hex')
    .slice(0, 8);
  return `${stem || 'tools'}-${digest}`;
}

/** The task queue a server named `name` uses unless `--task-queue` or `DURABLE_TOOLS_TASK_QUEUE` says otherwise. */
export function defaultMcpTaskQueue(name: string): string {
  return `durable-tools-mcp-${name}`;
}
