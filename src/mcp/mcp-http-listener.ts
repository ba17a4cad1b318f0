import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

/** The largest request body accepted, in bytes (Temporal refuses payloads past ~2 MB anyway). */
export const MCP_HTTP_MAX_BODY_BYTES = 4 * 1024 * 1024;

/** Options of {@link startMcpHttpListener}. */
export interface McpHttpListenerOptions {
  /** Port to listen on (0: any free port). */
  port: number;
  /** Interface to bind (default 127.0.0.1: reachable from this machine only). */
  host?: string;
  /** When set, every request needs `Authorization: Bearer <token>`. */
  token?: string;
  /** Extra accepted `Host` header values (`name:port`); the bound address, localhost and 127.0.0.1 always are. */
  allowedHosts?: readonly string[];
  /** Extra accepted `Origin` values (e.g. `https://my-host.example`); `http://` + an accepted host always is. */
  allowedOrigins?: readonly string[];
  /** A new MCP server for each session. */
  createServer: () => Server;
}

/** A running Streamable HTTP endpoint. */
export interface McpHttpListener {
  /** `http://host:port/mcp`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Serves MCP over Streamable HTTP at `/mcp`, with sessions (one MCP server per session, so a client's
 * `notifications/cancelled` reaches the running call), DNS-rebinding protection (the `Host` and any `Origin` header
 * must name this server) and an optional bearer token.
 */
export async function startMcpHttpListener(options: McpHttpListenerOptions): Promise<McpHttpListener> {
  const host = options.host ?? '127.0.0.1';
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let port = options.port;
  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent)
        reply(res, 500, `Internal error: ${error instanceof Error ? error.message : String(error)}`);
      else res.end();
    });
  });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/mcp') return reply(res, 404, 'Not found: the MCP endpoint is /mcp.');
    const refusal = checkRequest(req, port, host, options);
    if (refusal) return reply(res, refusal.status, refusal.message, refusal.headers);
    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (existing) return existing.handleRequest(req, res, req.method === 'POST' ? await readJson(req) : undefined);
    if (typeof sessionId === 'string') return reply(res, 404, 'Unknown or expired MCP session: initialize again.');
    if (req.method !== 'POST') return reply(res, 400, 'Start a session with an initialize request (POST).');
    const body = await readJson(req);
    if (!isInitializeRequest(body)) return reply(res, 400, 'No session: the first request must be initialize.');
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await options.createServer().connect(transport);
    await transport.handleRequest(req, res, body);
  };

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, host, () => resolve());
  });
  const address = http.address();
  port = typeof address === 'object' && address ? address.port : options.port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/mcp`,
    port,
    close: async () => {
      await Promise.all([...sessions.values()].map((t) => t.close().catch(() => {})));
      sessions.clear();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

interface Refusal {
  status: number;
  message: string;
  headers?: Record<string, string>;
}

function checkRequest(
  req: IncomingMessage,
  port: number,
  host: string,
  options: McpHttpListenerOptions,
): Refusal | undefined {
  const hosts = new Set([
    `127.0.0.1:${port}`,
    `localhost:${port}`,
    `[::1]:${port}`,
    `${host}:${port}`,
    ...(options.allowedHosts ?? []),
  ]);
  const hostHeader = req.headers.host;
  if (!hostHeader || !hosts.has(hostHeader.toLowerCase())) {
    return {
      status: 403,
      message: `Refused: Host "${hostHeader ?? ''}" is not this server (DNS rebinding protection).`,
    };
  }
  const origin = req.headers.origin;
  if (origin !== undefined) {
    const origins = new Set([...[...hosts].map((h) => `http://${h}`), ...(options.allowedOrigins ?? [])]);
    if (!origins.has(origin.toLowerCase()))
      return { status: 403, message: `Refused: Origin "${origin}" is not allowed.` };
  }
  if (options.token !== undefined && !bearerMatches(req.headers.authorization, options.token)) {
    return { status: 401, message: 'A bearer token is required.', headers: { 'WWW-Authenticate': 'Bearer' } };
  }
  return undefined;
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(header?.startsWith('Bearer ') ? header.slice(7) : '', 'utf8');
  const wanted = Buffer.from(token, 'utf8');
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MCP_HTTP_MAX_BODY_BYTES)
      throw new Error(`The request body is larger than ${MCP_HTTP_MAX_BODY_BYTES} bytes.`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return text.length === 0 ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

function reply(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}
