import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { isAllowedHostHeader, isLoopbackHost } from '../../net/http-guard';
import { SHARED_MCP_CALLER, type McpCaller } from './mcp-caller';
import { staticTokenAuthenticator, type McpCallerAuthenticator, type McpNamedToken } from './mcp-caller-auth';
import { McpConfigError } from '../client/mcp-config-error';
import { MCP_HTTP_SESSION_DEFAULTS, McpHttpSessions } from './mcp-http-sessions';
import { createMcpOAuthResourceServer, type McpOAuthOptions, type McpOAuthResourceServer } from './mcp-oauth-resource';
import { durableMcpServerCaller } from './mcp-server';
import { createModernMcpEndpoint, type ModernMcpServerFactory } from './mcp-modern-endpoint';
import { DurableToolsError } from '../../contract/durable-tools-error';

/** The largest request body accepted, in bytes (Temporal refuses payloads past ~2 MB anyway); larger ones get 413. */
export const MCP_HTTP_MAX_BODY_BYTES = 4 * 1024 * 1024;

/** Options of {@link startMcpHttpListener}. */
export interface McpHttpListenerOptions {
  /** Port to listen on (0: any free port). */
  port: number;
  /** Interface to bind (default 127.0.0.1: reachable from this machine only). */
  host?: string;
  /** When set, every request needs `Authorization: Bearer <token>`; its caller is `token:default`. */
  token?: string;
  /** Several static tokens, each its own caller (`token:<name>`); combined with `token`. */
  tokens?: readonly McpNamedToken[];
  /** Tells the caller of each request (e.g. an OAuth access-token check); replaces `token`/`tokens`. */
  authenticate?: McpCallerAuthenticator;
  /**
   * Serve as an OAuth resource server: JWT access tokens of this issuer for this resource, scopes per tool, and the
   * protected resource metadata (RFC 9728). Exclusive with `token`, `tokens` and `authenticate`.
   */
  oauth?: McpOAuthOptions;
  /**
   * Serve without authentication on an interface beyond loopback (everyone who reaches it shares one identity).
   * Without it, such a listener refuses to start.
   */
  insecureNoAuth?: boolean;
  /** Extra accepted `Host` header values (`name:port`); the bound address, localhost and 127.0.0.1 always are. */
  allowedHosts?: readonly string[];
  /** Extra accepted `Origin` values (e.g. `https://my-host.example`); `http://` + an accepted host always is. */
  allowedOrigins?: readonly string[];
  /** Live sessions at most (default 256); an `initialize` past the cap gets HTTP 503. */
  maxSessions?: number;
  /**
   * Live sessions of one caller at most (default 32); its `initialize` past that gets HTTP 503 while other callers
   * are still served. Without authentication every client is the one shared caller, bounded by `maxSessions` only.
   */
  maxSessionsPerCaller?: number;
  /** A session with nothing in flight for this long is closed (default 30 minutes). */
  sessionIdleTimeoutMs?: number;
  /** The clock of the idle timeout (default `Date.now`; tests move it). */
  now?: () => number;
  /**
   * A new MCP server for each session, answering the caller who opened it: pass `caller` on to
   * `createDurableMcpServer` (a durable server made for another caller is refused, so a forgotten `caller` cannot
   * put every caller into one scope).
   */
  createServer: (caller: McpCaller) => Server;
  /**
   * Serve MCP 2026-07-28 on the same endpoint: a new server (MCP SDK v2) for each 2026-07-28 request, answering its
   * authenticated caller (pass `caller` and `scopes` on, e.g. to `createModernMcpServer`). Without it the endpoint
   * speaks 2025-11-25 only (a 2026-07-28 request is answered 400, as any request without a session).
   */
  createModernServer?: ModernMcpServerFactory;
}

/** A running Streamable HTTP endpoint. */
export interface McpHttpListener {
  /** `http://host:port/mcp`. */
  url: string;
  port: number;
  /** In OAuth mode, the URL of the protected resource metadata (RFC 9728) that 401 answers name. */
  resourceMetadataUrl?: string;
  /** Live sessions now. */
  sessionCount(): number;
  /** Closes the sessions idle past the timeout now (it also happens on every request and every minute). */
  closeIdleSessions(): Promise<number>;
  close(): Promise<void>;
}

/**
 * Serves MCP over Streamable HTTP at `/mcp`, with sessions (one MCP server per session, so a client's
 * `notifications/cancelled` reaches the running call), DNS-rebinding protection (the `Host` and any `Origin` header
 * must name this server), authentication (bearer tokens or an {@link McpCallerAuthenticator}: each session belongs to
 * the caller that opened it, and its MCP server answers that caller only), a cap on live sessions and an idle timeout.
 * With `createModernServer`, the same endpoint also answers MCP 2026-07-28 requests (stateless, no session: each
 * request gets a server of its own for its caller, after the same checks; see mcp-modern-endpoint.ts).
 *
 * @throws {@link McpConfigError} `INVALID_CONFIG` when asked to bind beyond loopback without authentication and
 *   without `insecureNoAuth`.
 */
export async function startMcpHttpListener(options: McpHttpListenerOptions): Promise<McpHttpListener> {
  const host = options.host ?? '127.0.0.1';
  const authenticate = authenticatorOf(options);
  if (options.oauth && authenticate) {
    throw new McpConfigError(
      'OAuth and static tokens (or an authenticate function) are exclusive: configure one of them.',
      'INVALID_CONFIG',
    );
  }
  let oauth: McpOAuthResourceServer | undefined;
  if (!authenticate && !options.oauth && !isLoopbackHost(host) && options.insecureNoAuth !== true) {
    throw new McpConfigError(
      `Refusing to serve MCP on ${host} without authentication: anyone who reaches it could run every tool. Set a token (DURABLE_TOOLS_MCP_TOKEN / DURABLE_TOOLS_MCP_TOKENS), bind 127.0.0.1, or pass --insecure-no-auth.`,
      'INVALID_CONFIG',
    );
  }
  const sessions = new McpHttpSessions({
    maxSessions: options.maxSessions ?? MCP_HTTP_SESSION_DEFAULTS.maxSessions,
    maxSessionsPerOwner:
      authenticate || options.oauth
        ? (options.maxSessionsPerCaller ?? MCP_HTTP_SESSION_DEFAULTS.maxSessionsPerCaller)
        : Number.POSITIVE_INFINITY,
    idleTimeoutMs: options.sessionIdleTimeoutMs ?? MCP_HTTP_SESSION_DEFAULTS.idleTimeoutMs,
    now: options.now ?? Date.now,
  });
  const modern = options.createModernServer ? createModernMcpEndpoint(options.createModernServer) : undefined;
  let port = options.port;
  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) return void res.end();
      if (error instanceof BodyTooLarge) return tooLarge(req, res);
      reply(res, 500, `Internal error: ${error instanceof Error ? error.message : String(error)}`);
    });
  });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    void sessions.closeIdle();
    const url = new URL(req.url ?? '/', 'http://localhost');
    // OAuth checks exist once the port is known (the resource URL has it): nothing is served without them.
    if (options.oauth && !oauth) return reply(res, 503, 'The MCP server is starting.', { 'Retry-After': '1' });
    if (oauth?.isMetadataPath(url.pathname)) return serveMetadata(req, res, oauth, port, host, options);
    if (url.pathname !== '/mcp') return reply(res, 404, 'Not found: the MCP endpoint is /mcp.');
    const refusal = checkRequest(req, port, host, options);
    if (refusal) return reply(res, refusal.status, refusal.message, refusal.headers);
    const authenticated = await callerOf(req, authenticate, oauth);
    if ('status' in authenticated) {
      return reply(res, authenticated.status, authenticated.message, authenticated.headers);
    }
    const { caller } = authenticated;
    const owner = JSON.stringify([caller.subject, caller.clientId ?? null]);
    if (Number(req.headers['content-length'] ?? 0) > MCP_HTTP_MAX_BODY_BYTES) throw new BodyTooLarge();
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    const forbidden = oauth && authenticated.scopes ? oauth.authorize(authenticated.scopes, body) : undefined;
    if (forbidden) return reply(res, forbidden.status, forbidden.message, forbidden.headers);
    // 2026-07-28: stateless, one server per request, whatever session header a client might add.
    if (modern && (await modern.claims(req, body))) return modern.serve(req, res, body, caller, authenticated.scopes);
    if (authenticated.scopes) passScopes(req, caller, authenticated.scopes);
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = sessions.use(sessionId, owner);
      if (!session) return reply(res, 404, 'Unknown or expired MCP session: initialize again.');
      res.once('close', session.done);
      return session.transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST') return reply(res, 400, 'Start a session with an initialize request (POST).');
    if (!isInitializeRequest(body)) return reply(res, 400, 'No session: the first request must be initialize.');
    const release = sessions.reserve(owner);
    if (!release) {
      return reply(
        res,
        503,
        'Too many MCP sessions are open (on this server, or of this caller): close one (DELETE /mcp) or wait until idle ones expire, then initialize again.',
        { 'Retry-After': '60' },
      );
    }
    try {
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id: string): void => {
          release();
          sessions.add(id, transport, owner);
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      const server = options.createServer(caller);
      const servedCaller = durableMcpServerCaller(server);
      if (servedCaller && (servedCaller.subject !== caller.subject || servedCaller.clientId !== caller.clientId)) {
        throw new Error(
          'createServer made a durable MCP server for another caller: pass its caller argument to createDurableMcpServer.',
        );
      }
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    } finally {
      release();
    }
  };

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, host, () => resolve());
  });
  const address = http.address();
  port = typeof address === 'object' && address ? address.port : options.port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/mcp`;
  try {
    oauth = options.oauth ? createMcpOAuthResourceServer(options.oauth, url) : undefined;
  } catch (error) {
    await new Promise<void>((resolve) => http.close(() => resolve()));
    throw error;
  }
  const sweeper = setInterval(
    () => void sessions.closeIdle(),
    Math.min(60_000, options.sessionIdleTimeoutMs ?? MCP_HTTP_SESSION_DEFAULTS.idleTimeoutMs),
  );
  sweeper.unref();
  return {
    url,
    port,
    ...(oauth ? { resourceMetadataUrl: oauth.metadataUrl } : {}),
    sessionCount: () => sessions.size,
    closeIdleSessions: () => sessions.closeIdle(),
    close: async () => {
      clearInterval(sweeper);
      await sessions.closeAll();
      await modern?.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function authenticatorOf(options: McpHttpListenerOptions): McpCallerAuthenticator | undefined {
  if (options.authenticate) return options.authenticate;
  const tokens = [
    ...(options.token !== undefined ? [{ name: 'default', token: options.token }] : []),
    ...(options.tokens ?? []),
  ];
  return tokens.length > 0 ? staticTokenAuthenticator(tokens) : undefined;
}

/**
 * Hands the request's OAuth scopes to the MCP server (the SDK passes `req.auth` on as `extra.authInfo` of each
 * request): the approval tools tell an approver by them. The token itself stays here.
 */
function passScopes(req: IncomingMessage, caller: McpCaller, scopes: ReadonlySet<string>): void {
  const auth: AuthInfo = { token: '', clientId: caller.clientId ?? caller.subject, scopes: [...scopes] };
  (req as IncomingMessage & { auth?: AuthInfo }).auth = auth;
}

interface Refusal {
  status: number;
  message: string;
  headers?: Record<string, string>;
}

/** The caller of a request (and, in OAuth mode, the scopes of its token), or the refusal to answer. */
async function callerOf(
  req: IncomingMessage,
  authenticate: McpCallerAuthenticator | undefined,
  oauth: McpOAuthResourceServer | undefined,
): Promise<{ caller: McpCaller; scopes?: ReadonlySet<string> } | Required<Refusal>> {
  if (oauth) return oauth.authenticate(req.headers.authorization);
  const caller = authenticate ? await authenticate(req) : SHARED_MCP_CALLER;
  if (caller) return { caller };
  return { status: 401, message: 'A valid bearer token is required.', headers: { 'WWW-Authenticate': 'Bearer' } };
}

/**
 * The protected resource metadata (GET, or a CORS preflight): public, so any `Origin` may read it, but the `Host`
 * check holds.
 */
function serveMetadata(
  req: IncomingMessage,
  res: ServerResponse,
  oauth: McpOAuthResourceServer,
  port: number,
  host: string,
  options: McpHttpListenerOptions,
): void {
  const server = { port, host, ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}) };
  if (!isAllowedHostHeader(req.headers.host, server)) {
    return reply(res, 403, `Refused: Host "${req.headers.host ?? ''}" is not this server (DNS rebinding protection).`);
  }
  const cors = { 'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Methods': 'GET' };
  if (req.method === 'OPTIONS') return void res.writeHead(204, cors).end();
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return reply(res, 405, 'The protected resource metadata is read with GET.', { Allow: 'GET' });
  }
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'max-age=300', ...cors });
  res.end(req.method === 'HEAD' ? undefined : JSON.stringify(oauth.metadata()));
}

function checkRequest(
  req: IncomingMessage,
  port: number,
  host: string,
  options: McpHttpListenerOptions,
): Refusal | undefined {
  const server = { port, host, ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}) };
  const hostHeader = req.headers.host;
  if (!isAllowedHostHeader(hostHeader, server)) {
    return {
      status: 403,
      message: `Refused: Host "${hostHeader ?? ''}" is not this server (DNS rebinding protection).`,
    };
  }
  const origin = req.headers.origin;
  if (origin !== undefined) {
    const accepted = (options.allowedOrigins ?? []).map((o) => o.toLowerCase());
    const ownHost = /^http:\/\/(.+)$/.exec(origin.toLowerCase())?.[1];
    if (!accepted.includes(origin.toLowerCase()) && !(ownHost && isAllowedHostHeader(ownHost, server)))
      return { status: 403, message: `Refused: Origin "${origin}" is not allowed.` };
  }
  return undefined;
}

/** A request body past {@link MCP_HTTP_MAX_BODY_BYTES}. */
class BodyTooLarge extends DurableToolsError<'BODY_TOO_LARGE'> {
  override readonly name = 'BodyTooLarge';
  constructor() {
    super(`The request body is larger than ${MCP_HTTP_MAX_BODY_BYTES} bytes.`, 'BODY_TOO_LARGE');
  }
}

/** How much of an oversized body is read and dropped before the connection is cut instead of answered. */
const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * The body as JSON (undefined when empty or not JSON). Past {@link MCP_HTTP_MAX_BODY_BYTES} it stops keeping the
 * bytes, reads the rest of the body (up to a limit) so the client can read the answer, and rejects with
 * {@link BodyTooLarge}.
 */
function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MCP_HTTP_MAX_BODY_BYTES) chunks.push(chunk);
      else if (size > DRAIN_LIMIT_BYTES) req.destroy();
    });
    req.once('error', reject);
    req.once('close', () => reject(new Error('The request was aborted before its body ended.')));
    req.once('end', () => {
      if (size > MCP_HTTP_MAX_BODY_BYTES) return reject(new BodyTooLarge());
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        resolve(text.length === 0 ? undefined : JSON.parse(text));
      } catch {
        resolve(undefined);
      }
    });
  });
}

/** 413 with a JSON-RPC error once the body is read (dropped), then the connection closes. */
function tooLarge(req: IncomingMessage, res: ServerResponse): void {
  const send = () =>
    reply(
      res,
      413,
      `The request body is larger than ${MCP_HTTP_MAX_BODY_BYTES} bytes.`,
      { Connection: 'close' },
      -32600,
    );
  if (req.complete || req.readableEnded) return send();
  let dropped = 0;
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DRAIN_LIMIT_BYTES) req.destroy();
  });
  req.once('end', send);
}

function reply(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  code = -32000,
): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
