import {
  Client,
  StreamableHTTPClientTransport,
  type CallToolResult,
  type FetchLike,
  type Progress,
  type Tool as McpToolListing,
  type Transport,
  type VersionNegotiationOptions,
} from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import {
  DEFAULT_MCP_CALL_TIMEOUT_MS,
  isStdioServer,
  type McpHttpServerConfig,
  type McpProtocolChoice,
  type McpServerConfig,
} from './mcp-config';
import { unreachableServerError } from './mcp-errors';
import { MCP_FENCING_TOKEN_META, MCP_IDEMPOTENCY_KEY_META } from './mcp-idempotency-meta';
import { mcpListHints, type McpListHints } from './mcp-list-hints';
import { oauthFetch } from './mcp-oauth-fetch';
import type { McpRegisteredClient } from './mcp-oauth-registration';
import { McpOAuthTokens } from './mcp-oauth-tokens';
import { isBrokenStream, McpBrokenStreamError, reissueDelayMs, MCP_MAX_REISSUES } from './mcp-reissue';
import { McpStreamEnds } from './mcp-stream-end';
import { outgoingTraceMeta } from './mcp-trace-meta';

export { MCP_FENCING_TOKEN_META, MCP_IDEMPOTENCY_KEY_META } from './mcp-idempotency-meta';

/** How long after its HTTP stream ended an answer may still be on its way (parsed, dispatched) before it is given up. */
const STREAM_END_GRACE_MS = 100;

/** How much of a stdio server's stderr is kept to explain why it died. */
const STDERR_TAIL_CHARS = 2_000;

/** How the worker names itself to MCP servers (`clientInfo`). */
const CLIENT_INFO = { name: 'durable-tools', version: '0.1.0' };

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
  /**
   * Whether a request whose HTTP stream broke before its answer (2026-07-28: no resumability) is sent again, with
   * the same `_meta` and so the same idempotency key (at most {@link MCP_MAX_REISSUES} times). Only with a key, and
   * only on a 2026-07-28 connection; the caller says whether the server may be trusted to deduplicate by the key.
   */
  reissue?: boolean;
  /** Called before each re-issue, with the number of the issue about to be sent (2, 3, …). */
  onReissue?: (issue: number, cause: unknown) => void;
}

/** A server's tool list and the cache hints that came with it (2026-07-28 `ttlMs`, `cacheScope`). */
export interface McpToolList {
  tools: McpToolListing[];
  hints: McpListHints;
}

/** Which revision of MCP a connection speaks: `modern` is 2026-07-28 (stateless), `legacy` 2025-11-25 and older. */
export interface McpConnectionInfo {
  era: 'modern' | 'legacy';
  protocolVersion: string | undefined;
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
  /** The worker's registrations with authorization servers, by issuer: one for all the entries that name it. */
  readonly #registrations = new Map<string, Promise<McpRegisteredClient>>();
  readonly #oauth: McpOAuthRuntime;
  readonly #streamEnds = new McpStreamEnds();
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
        registrations: this.#registrations,
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

  /**
   * Lists every tool of a server (the SDK walks the pages, at most 64) from the server itself, never from a cache:
   * the host decides when a list is due, from the hints returned with it.
   */
  async listTools(server: string): Promise<McpToolList> {
    const { client } = await this.#connect(server);
    const listed = await client.listTools(undefined, { cacheMode: 'bypass' });
    return { tools: listed.tools, hints: mcpListHints(listed) };
  }

  /** The revision a server's connection negotiated (connecting if needed). */
  async connectionInfo(server: string): Promise<McpConnectionInfo> {
    const { client } = await this.#connect(server);
    return { era: client.getProtocolEra() ?? 'legacy', protocolVersion: client.getNegotiatedProtocolVersion() };
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
    const reissue =
      options.reissue === true &&
      options.idempotencyKey !== undefined &&
      connection.client.getProtocolEra() === 'modern' &&
      !isStdioServer(this.config(server));
    const meta = {
      ...outgoingTraceMeta(),
      ...(options.idempotencyKey ? { [MCP_IDEMPOTENCY_KEY_META]: options.idempotencyKey } : {}),
      ...(options.fencingToken ? { [MCP_FENCING_TOKEN_META]: options.fencingToken } : {}),
    };
    this.#inFlight.set(server, this.inFlightCalls(server) + 1);
    try {
      for (let issue = 1; ; issue += 1) {
        try {
          return await this.#send(connection, tool, args, meta, options, timeout);
        } catch (error) {
          if (!reissue || issue > MCP_MAX_REISSUES || options.signal?.aborted || !isBrokenStream(error)) throw error;
          options.onReissue?.(issue + 1, error);
          await new Promise((resolve) => setTimeout(resolve, reissueDelayMs(issue)));
        }
      }
    } finally {
      this.#inFlight.set(server, this.inFlightCalls(server) - 1);
    }
  }

  /** How many `tools/call` requests to this server are waiting for their answer now. */
  inFlightCalls(server: string): number {
    return this.#inFlight.get(server) ?? 0;
  }

  /**
   * One `tools/call`. When its HTTP response stream ends without the answer (the server or a proxy cut it), the
   * request is aborted at once with {@link McpBrokenStreamError} instead of waiting for the timeout: the fetch of
   * the transport says when the stream ended ({@link McpStreamEnds}), and an answer that has not arrived a moment
   * later never will.
   */
  async #send(
    connection: Connection,
    tool: string,
    args: Record<string, unknown>,
    meta: Record<string, unknown>,
    options: McpCallOptions,
    timeout: number,
  ): Promise<CallToolResult> {
    const broken = new AbortController();
    let settled = false;
    const signal = options.signal ? AbortSignal.any([options.signal, broken.signal]) : broken.signal;
    // 2026-07-28 only: a 2025-11-25 server may close a stream on purpose and answer on the resumed one (SEP-1699).
    const unwatch =
      options.idempotencyKey && connection.client.getProtocolEra() === 'modern'
        ? this.#streamEnds.watch(options.idempotencyKey, () => {
            setTimeout(() => {
              if (!settled) broken.abort(new McpBrokenStreamError(tool));
            }, STREAM_END_GRACE_MS).unref();
          })
        : () => {};
    try {
      return await connection.client.callTool(
        { name: tool, arguments: args, _meta: meta },
        {
          timeout,
          signal,
          ...(options.onProgress ? { onprogress: options.onProgress, resetTimeoutOnProgress: true } : {}),
        },
      );
    } catch (error) {
      if (broken.signal.aborted && !options.signal?.aborted) throw broken.signal.reason as Error;
      throw error;
    } finally {
      settled = true;
      unwatch();
    }
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
    const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: 'legacy' } });
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
    const client = new Client(CLIENT_INFO, {
      versionNegotiation: negotiationOf(config.protocol),
      listChanged: {
        tools: { autoRefresh: false, debounceMs: 0, onChanged: () => this.#onToolsChanged(server) },
      },
    });
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

  /**
   * The headers of an HTTP server, and its fetch: the global one at the time of each request (so the worker's
   * request hooks see it), adding the OAuth token when the server has `oauth`, watching the ends of call streams.
   */
  #httpOptions(server: string, config: McpHttpServerConfig): { requestInit?: RequestInit; fetch: FetchLike } {
    const tokens = this.oauthTokens(server);
    const base: FetchLike = this.#oauth.fetch ?? ((url, init) => fetch(url, init));
    return {
      ...(config.headers ? { requestInit: { headers: config.headers } } : {}),
      fetch: this.#streamEnds.fetch(tokens ? oauthFetch(tokens, this.#oauth.fetch) : base),
    };
  }
}

/** The SDK's negotiation mode for a server's `protocol` setting. */
function negotiationOf(protocol: McpProtocolChoice | undefined): VersionNegotiationOptions {
  if (protocol === '2025-11-25') return { mode: 'legacy' };
  if (protocol === '2026-07-28') return { mode: { pin: '2026-07-28' } };
  return { mode: 'auto' };
}

function sessionOf(client: Client): McpSession | undefined {
  const transport = client.transport;
  if (!(transport instanceof StreamableHTTPClientTransport) || !transport.sessionId) return undefined;
  return {
    sessionId: transport.sessionId,
    ...(transport.protocolVersion ? { protocolVersion: transport.protocolVersion } : {}),
  };
}
