import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttpTransport,
  type ClientOptions,
  type StreamableHTTPClientTransportOptions,
} from '@modelcontextprotocol/client';
import { modernMcpServerFactory } from '../../src/mcp/server/mcp-modern-server';
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
  /**
   * An MCP SDK v2 client pinned to 2026-07-28 (stateless: no session), with `Bearer <token>`, closed after the test.
   */
  connectModern(
    token: string,
    clientOptions?: ClientOptions,
    transportOptions?: StreamableHTTPClientTransportOptions,
  ): Promise<ModernClient>;
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
  const clients: { close(): Promise<void> }[] = [];
  const served = () => ({
    client: temporal.client,
    taskQueue: options.taskQueue,
    catalog: options.catalog(),
    ...(options.approvals ? { approvals: options.approvals } : {}),
    ...(options.agents ? { agents: options.agents } : {}),
    ...(options.authority ? { authority: options.authority } : {}),
  });
  beforeAll(async () => {
    listener = await startMcpHttpListener({
      port: 0,
      ...(options.tokens ? { tokens: [...options.tokens] } : {}),
      ...(options.oauth ? { oauth: options.oauth() } : {}),
      createServer: (caller) => createDurableMcpServer({ ...served(), caller }),
      createModernServer: modernMcpServerFactory(served()),
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
    async connectModern(token, clientOptions = {}, transportOptions = {}) {
      const client = new ModernClient(
        { name: 'test-2026', version: '1' },
        {
          ...clientOptions,
          versionNegotiation: { mode: { pin: '2026-07-28' } },
        },
      );
      await client.connect(
        new ModernHttpTransport(new URL(started().url), {
          ...transportOptions,
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
