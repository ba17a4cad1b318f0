/**
 * The 2026-07-28 half of the one MCP endpoint: the MCP SDK v2's `createMcpHandler` (strict: `legacy: 'reject'`),
 * behind the listener's own checks (Host/Origin, authentication, OAuth scopes, body size), on Node's `http`.
 * The listener asks {@link ModernMcpEndpoint.claims} first, with the SDK's own classifier: a request that carries
 * the per-request `_meta` envelope (or names a modern revision) is this endpoint's; everything else (an
 * `initialize`, a request of a 2025-11-25 session, GET and DELETE) stays with the 2025-11-25 sessions.
 *
 * Each request gets a server of its own, made for the request's authenticated caller (the SDK hands the listener's
 * `authInfo` to the factory; nothing is read from the request's headers here). A client that disconnects aborts the
 * request's handler (it stops waiting); the durable call goes on, and a re-issued request with the same key finds it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  createMcpHandler,
  isLegacyRequest,
  type AuthInfo,
  type McpHttpHandler,
  type Server,
} from '@modelcontextprotocol/server';
import type { McpCaller } from './mcp-caller';

/** Makes the 2026-07-28 server of one request, for its caller (and the scopes of its OAuth token). */
export type ModernMcpServerFactory = (caller: McpCaller, scopes: ReadonlySet<string> | undefined) => Server;

/** The 2026-07-28 side of the endpoint. */
export interface ModernMcpEndpoint {
  /** Whether the request (its body already read) is a 2026-07-28 request, as the SDK classifies it. */
  claims(req: IncomingMessage, body: unknown): Promise<boolean>;
  /** Answers the request as `caller`. */
  serve(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    caller: McpCaller,
    scopes: ReadonlySet<string> | undefined,
  ): Promise<void>;
  close(): Promise<void>;
}

/** Where the listener's caller rides in the SDK's `authInfo` (it is passed through to the factory untouched). */
const CALLER_FIELD = 'io.durable-tools/caller';

/** The 2026-07-28 endpoint serving the servers `createServer` makes. */
export function createModernMcpEndpoint(createServer: ModernMcpServerFactory): ModernMcpEndpoint {
  const handler: McpHttpHandler = createMcpHandler(
    ({ authInfo }) => {
      const passed = authInfo?.extra?.[CALLER_FIELD] as { caller: McpCaller; scopes?: string[] } | undefined;
      if (!passed) throw new Error('A 2026-07-28 request reached the MCP handler without its caller.');
      return createServer(passed.caller, passed.scopes ? new Set(passed.scopes) : undefined);
    },
    { legacy: 'reject' },
  );
  return {
    claims: async (req, body) => {
      if (req.method !== 'POST') return false;
      return !(await isLegacyRequest(webRequestOf(req, undefined), body));
    },
    serve: async (req, res, body, caller, scopes) => {
      const aborted = new AbortController();
      res.once('close', () => aborted.abort());
      // The token itself stays in the listener: handlers get the caller and, in OAuth mode, the token's scopes.
      const authInfo: AuthInfo = {
        token: '',
        clientId: caller.clientId ?? caller.subject,
        scopes: scopes ? [...scopes] : [],
        extra: { [CALLER_FIELD]: { caller, ...(scopes ? { scopes: [...scopes] } : {}) } },
      };
      const response = await handler.fetch(webRequestOf(req, body, aborted.signal), { authInfo, parsedBody: body });
      await sendResponse(response, res);
    },
    close: () => handler.close(),
  };
}

/** The Node request as a web `Request` (its body, already read and parsed, as JSON again). */
function webRequestOf(req: IncomingMessage, body: unknown, signal?: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name === 'content-length') continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/mcp'}`, {
    method: req.method ?? 'POST',
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    ...(signal ? { signal } : {}),
  });
}

/** Writes a web `Response` (JSON or an SSE stream) to the Node response; stops reading when the client left. */
async function sendResponse(response: Response, res: ServerResponse): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) return void res.end();
  const reader = response.body.getReader();
  res.once('close', () => void reader.cancel().catch(() => {}));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
  } catch {
    // The client left mid-stream: nothing to answer.
  }
  res.end();
}
