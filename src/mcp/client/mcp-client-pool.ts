import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolResultSchema,
  type CallToolResult,
  type Progress,
  type Tool as McpToolListing,
} from '@modelcontextprotocol/sdk/types.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  DEFAULT_MCP_CALL_TIMEOUT_MS,
  isStdioServer,
  type McpHttpServerConfig,
  type McpServerConfig,
} from './mcp-config';
import { unreachableServerError } from './mcp-errors';
import { oauthFetch } from './mcp-oauth-fetch';
import { McpOAuthTokens } from './mcp-oauth-tokens';

/** The `_meta` key that carries a call's idempotency key to an MCP server (and to our own MCP server). */
export const MCP_IDEMPOTENCY_KEY_META = 'io.durable-tools/idempotency-key';

/** The `_meta` key that carries the fencing token of the call's key ownership, when the worker has a key store. */
export const MCP_FENCING_TOKEN_META = 'io.durable-tools/fencing-token';

/** How much of a stdio server's stderr is kept to explain why it died. */
const STDERR_TAIL_CHARS = 2_000;

/** Options of one `tools/call` through the pool. */
export interface McpCallOptions {
  /** Aborting it cancels the MCP request (`notifications/cancelled`). */
  signal?: AbortSignal;
  /** Called on every `notifications/progress` of the call. */
  onProgress?: (progress: Progress) => void;
  /** Sent as the request's `_meta` under {@link MCP_IDEMPOTENCY_KEY_META}. */
  idempotencyKey?: string;
  /** Sent as the request's `_meta` under {@link MCP_FENCING_TOKEN_META}. */
  fencingToken?: string;
  /** Request timeout (default: the server's `timeoutMs`, else 60 s); progress resets it. */
  timeoutMs?: number;
}

/** The Streamable HTTP session a task was created in (tasks of some servers are visible only in it). */
export interface McpSession {
  sessionId: string;
  protocolVersion?: string;
}

/** What the OAuth clients of protected servers use besides their settings (tests inject both). */
export interface McpOAuthRuntime {
  /** Clock of token expiry (default `Date.now`). */
  now?: () => number;
  /** Fetch of token, discovery and MCP requests (default: the global fetch at the time of each request). */
  fetch?: FetchLike;
  /** Where `env:NAME` secret references are read (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
}

interface Connection {
  client: Client;
  /** Process id of a stdio server. */
  pid?: number | null;
  closed: boolean;
  stderrTail: string;
}

/**
 * One MCP client per configured server, shared by every activity of a worker. A connection is opened on first use;
 * when it closes (a stdio server exited, an HTTP session ended) it is dropped and the next request opens a new one,
 * so a dead stdio server is restarted on the next call.
 */
export class McpClientPool {
  readonly #servers: Readonly<Record<string, McpServerConfig>>;
  readonly #connections = new Map<string, Promise<Connection>>();
  readonly #onToolsChanged: (server: string) => void;
  readonly #inFlight = new Map<string, number>();
  /** Connections that rejoin the HTTP session of an earlier worker, to poll the tasks created in it. */
  readonly #rejoined = new Map<string, Promise<Client>>();
  /** The OAuth tokens of each protected server, shared by its connections. */
  readonly #tokens = new Map<string, McpOAuthTokens>();
  readonly #oauth: McpOAuthRuntime;
  #closed = false;

  constructor(
    servers: Readonly<Record<string, McpServerConfig>>,
    options: { onToolsChanged?: (server: string) => void; oauth?: McpOAuthRuntime } = {},
  ) {
    this.#servers = servers;
    this.#onToolsChanged = options.onToolsChanged ?? (() => {});
    this.#oauth = options.oauth ?? {};
  }

  /** The OAuth token holder of a protected server (undefined for a server without `oauth`). */
  oauthTokens(server: string): McpOAuthTokens | undefined {
    const config = this.config(server);
    if (isStdioServer(config) || !config.oauth) return undefined;
    let tokens = this.#tokens.get(server);
    if (!tokens) {
      tokens = new McpOAuthTokens({
        server,
        url: config.url,
        settings: config.oauth,
        ...(this.#oauth.now ? { now: this.#oauth.now } : {}),
        ...(this.#oauth.fetch ? { fetch: this.#oauth.fetch } : {}),
        ...(this.#oauth.env ? { env: this.#oauth.env } : {}),
      });
      this.#tokens.set(server, tokens);
    }
    return tokens;
  }

  /** Names of the configured, enabled servers. */
  serverNames(): string[] {
    return Object.entries(this.#servers)
      .filter(([, config]) => config.disabled !== true)
      .map(([name]) => name);
  }

  /** The configuration of a server (throws for an unknown name). */
  config(server: string): McpServerConfig {
    const config = this.#servers[server];
    if (!config) throw new Error(`No MCP server named "${server}" is configured.`);
    return config;
  }

  /** Lists every tool of a server, following `nextCursor` page by page. */
  async listTools(server: string): Promise<McpToolListing[]> {
    const { client } = await this.#connect(server);
    const tools: McpToolListing[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      tools.push(...page.tools);
      cursor = page.nextCursor;
      if (cursor !== undefined && seen.has(cursor))
        throw new Error(`MCP server "${server}" repeats the cursor ${cursor}.`);
      if (cursor !== undefined) seen.add(cursor);
    } while (cursor !== undefined);
    return tools;
  }

  /**
   * Calls a tool. Connection failures become transient errors that say nothing was sent; everything the server or
   * the transport answers is returned or thrown as the SDK gives it (see `classifyMcpCallError`).
   */
  async callTool(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    options: McpCallOptions = {},
  ): Promise<CallToolResult> {
    const connection = await this.#connect(server);
    const timeout = options.timeoutMs ?? this.config(server).timeoutMs ?? DEFAULT_MCP_CALL_TIMEOUT_MS;
    this.#inFlight.set(server, this.inFlightCalls(server) + 1);
    try {
      return await this.#send(connection, tool, args, options, timeout);
    } finally {
      this.#inFlight.set(server, this.inFlightCalls(server) - 1);
    }
  }

  /** How many `tools/call` requests to this server are waiting for their answer now. */
  inFlightCalls(server: string): number {
    return this.#inFlight.get(server) ?? 0;
  }

  async #send(
    connection: Connection,
    tool: string,
    args: Record<string, unknown>,
    options: McpCallOptions,
    timeout: number,
  ): Promise<CallToolResult> {
    const result = await connection.client.callTool(
      {
        name: tool,
        arguments: args,
        _meta: {
          ...(options.idempotencyKey ? { [MCP_IDEMPOTENCY_KEY_META]: options.idempotencyKey } : {}),
          ...(options.fencingToken ? { [MCP_FENCING_TOKEN_META]: options.fencingToken } : {}),
        },
      },
      CallToolResultSchema,
      {
        timeout,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onProgress ? { onprogress: options.onProgress, resetTimeoutOnProgress: true } : {}),
      },
    );
    return result as CallToolResult;
  }

  /** Whether the server declared that `tools/call` may run as a task (`capabilities.tasks.requests.tools.call`). */
  async supportsToolTasks(server: string): Promise<boolean> {
    const { client } = await this.#connect(server);
    return client.getServerCapabilities()?.tasks?.requests?.tools?.call !== undefined;
  }

  /**
   * The client for a server's requests, and the HTTP session it is in (none over stdio). With `session`, a client
   * in that session: this worker's own connection when it is in it, else one that rejoins it (no new handshake),
   * so the tasks an earlier worker created there can be polled.
   */
  async sessionClient(server: string, session?: McpSession): Promise<{ client: Client; session?: McpSession }> {
    const connection = await this.#connect(server);
    const own = sessionOf(connection.client);
    if (!session || own?.sessionId === session.sessionId)
      return { client: connection.client, ...(own ? { session: own } : {}) };
    const key = `${server}\n${session.sessionId}`;
    let pending = this.#rejoined.get(key);
    if (!pending) {
      pending = this.#rejoin(server, session, () => this.#rejoined.delete(key));
      this.#rejoined.set(key, pending);
      pending.catch(() => this.#rejoined.delete(key));
    }
    return { client: await pending, session };
  }

  async #rejoin(server: string, session: McpSession, forget: () => void): Promise<Client> {
    const config = this.config(server);
    if (isStdioServer(config))
      throw new Error(`MCP server "${server}" is a stdio server: it has no sessions to rejoin.`);
    const client = new Client({ name: 'durable-tools', version: '0.1.0' });
    const transport = new StreamableHTTPClientTransport(new URL(config.url), {
      sessionId: session.sessionId,
      ...this.#httpOptions(server, config),
    });
    if (session.protocolVersion) transport.setProtocolVersion(session.protocolVersion);
    client.onclose = forget;
    try {
      await client.connect(transport); // a transport with a session id skips the handshake
    } catch (cause) {
      await client.close().catch(() => {});
      throw unreachableServerError(server, cause);
    }
    return client;
  }

  /** The process id of a running stdio server, or undefined (not connected, or not stdio). */
  async processId(server: string): Promise<number | undefined> {
    const pending = this.#connections.get(server);
    const connection = pending ? await pending.catch(() => undefined) : undefined;
    return connection?.closed === false ? (connection.pid ?? undefined) : undefined;
  }

  /** The last lines a stdio server wrote to stderr (to explain a crash), or ''. */
  async stderrTail(server: string): Promise<string> {
    const pending = this.#connections.get(server);
    return pending ? ((await pending.catch(() => undefined))?.stderrTail ?? '') : '';
  }

  /** Closes every connection (stops stdio servers). The pool refuses new requests afterwards. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#connections.values()];
    const rejoined = [...this.#rejoined.values()];
    this.#connections.clear();
    this.#rejoined.clear();
    await Promise.all([
      ...all.map(async (pending) => (await pending.catch(() => undefined))?.client.close().catch(() => {})),
      ...rejoined.map(async (pending) => (await pending.catch(() => undefined))?.close().catch(() => {})),
    ]);
  }

  #connect(server: string): Promise<Connection> {
    if (this.#closed) return Promise.reject(unreachableServerError(server, new Error('the MCP client pool is closed')));
    const existing = this.#connections.get(server);
    if (existing) return existing;
    const forget = () => {
      if (this.#connections.get(server) === pending) this.#connections.delete(server);
    };
    const pending = this.#open(server, forget);
    this.#connections.set(server, pending);
    pending.catch(forget);
    return pending;
  }

  async #open(server: string, forget: () => void): Promise<Connection> {
    const config = this.config(server);
    const client = new Client(
      { name: 'durable-tools', version: '0.1.0' },
      {
        listChanged: {
          tools: { autoRefresh: false, debounceMs: 0, onChanged: () => this.#onToolsChanged(server) },
        },
      },
    );
    const connection: Connection = { client, closed: false, stderrTail: '' };
    const transport = this.#transport(server, config, connection);
    client.onclose = () => {
      connection.closed = true;
      forget();
    };
    try {
      await client.connect(transport);
      if (transport instanceof StdioClientTransport) connection.pid = transport.pid;
    } catch (cause) {
      await client.close().catch(() => {});
      const tail = connection.stderrTail.trim();
      throw unreachableServerError(server, tail ? new Error(`${(cause as Error).message}; stderr: ${tail}`) : cause);
    }
    return connection;
  }

  #transport(server: string, config: McpServerConfig, connection: Connection): Transport {
    if (isStdioServer(config)) {
      const transport = new StdioClientTransport({
        command: config.command,
        args: config.args,
        env: { ...getDefaultEnvironment(), ...config.env },
        ...(config.cwd ? { cwd: config.cwd } : {}),
        stderr: 'pipe',
      });
      transport.stderr?.on('data', (chunk: Buffer) => {
        connection.stderrTail = (connection.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
      });
      return transport;
    }
    return new StreamableHTTPClientTransport(new URL(config.url), this.#httpOptions(server, config));
  }

  /** The headers of an HTTP server, and the fetch that adds its OAuth token when it has `oauth`. */
  #httpOptions(server: string, config: McpHttpServerConfig): { requestInit?: RequestInit; fetch?: FetchLike } {
    const tokens = this.oauthTokens(server);
    return {
      ...(config.headers ? { requestInit: { headers: config.headers } } : {}),
      ...(tokens ? { fetch: oauthFetch(tokens, this.#oauth.fetch) } : {}),
    };
  }
}

function sessionOf(client: Client): McpSession | undefined {
  const transport = client.transport;
  if (!(transport instanceof StreamableHTTPClientTransport) || !transport.sessionId) return undefined;
  return {
    sessionId: transport.sessionId,
    ...(transport.protocolVersion ? { protocolVersion: transport.protocolVersion } : {}),
  };
}
