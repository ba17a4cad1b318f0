/**
 * A tools module that also names MCP servers (its `mcp` export), for `durable-tools worker --tools` in
 * test/integration/cli-worker-mcp.test.ts: the command-line tests' tools and server-everything over stdio.
 */
import { everythingStdio } from './mcp-everything';

export { tools } from './cli-tools';

/** The MCP servers whose tools the worker also runs. */
export const mcp = { mcpServers: { everything: everythingStdio() } };
