import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ToolCatalogEntry } from '../../src/contract/tool-catalog-entry';
import { startMcpHttpListener, type McpHttpListener } from '../../src/mcp/server/mcp-http-listener';
import type { McpOAuthOptions } from '../../src/mcp/server/mcp-oauth-resource';
import type { McpApprovalOptions } from '../../src/mcp/server/mcp-approver-rules';
import { createDurableMcpServer } from '../../src/mcp/server/mcp-server';
import type { McpRunAuthorityOptions } from '../../src/mcp/server/mcp-run-authority';
import type { TestTemporal } from './temporal-test-env';
import type { AgentDefinition } from '../../src/agents/define-agent';

/** The durable MCP server of a test file, on a Streamable HTTP listener, and its SDK clients. */
export interface McpTestListener {
  /**
   * An SDK client connected with `Bearer <token>`, closed after the test; `beforeConnect` sets it up first (e.g. its
   * notification handlers).
   */
  connect(token: string, beforeConnect?: (client: McpClient) => void): Promise<McpClient>;
  /** Closes `client` after the test too (a client connected another way). */
  track(client: McpClient): void;
  /** The listener (once the beforeAll hooks ran). */
  listener(): McpHttpListener;
}

/**
 * Starts, for the test file, a listener whose sessions each get a durable MCP server of `catalog` for their caller
 * (one per token of `tokens`, or per access token in OAuth mode: `oauth` is read when the listener starts), and
 * closes the clients after each test and the listener after all.
 */
export function useMcpTestListener(
  temporal: TestTemporal,
  options: {
    taskQueue: string;
    catalog: () => readonly ToolCatalogEntry[];
    tokens?: readonly { name: string; token: string }[];
    oauth?: () => McpOAuthOptions;
    /** The approval rules of the servers (default theirs). */
    approvals?: McpApprovalOptions;
    /** Agents the servers serve as tools. */
    agents?: readonly AgentDefinition[];
    /** The authority the servers give the calls and runs they start (default none: no grants). */
    authority?: McpRunAuthorityOptions;
  },
): McpTestListener {
  let listener: McpHttpListener | undefined;
  const clients: McpClient[] = [];
  beforeAll(async () => {
    listener = await startMcpHttpListener({
      port: 0,
      ...(options.tokens ? { tokens: [...options.tokens] } : {}),
      ...(options.oauth ? { oauth: options.oauth() } : {}),
      createServer: (caller) =>
        createDurableMcpServer({
          client: temporal.client,
          taskQueue: options.taskQueue,
          catalog: options.catalog(),
          caller,
          ...(options.approvals ? { approvals: options.approvals } : {}),
          ...(options.agents ? { agents: options.agents } : {}),
          ...(options.authority ? { authority: options.authority } : {}),
        }),
    });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await listener?.close();
  });
  const started = (): McpHttpListener => {
    if (!listener) throw new Error('The MCP listener is started only once the beforeAll hooks run.');
    return listener;
  };
  return {
    async connect(token, beforeConnect) {
      const client = new McpClient({ name: 'test', version: '1' });
      beforeConnect?.(client);
      await client.connect(
        new StreamableHTTPClientTransport(new URL(started().url), {
          requestInit: { headers: { Authorization: `Bearer ${token}` } },
        }),
      );
      clients.push(client);
      return client;
    },
    track(client) {
      clients.push(client);
    },
    listener: started,
  };
}
