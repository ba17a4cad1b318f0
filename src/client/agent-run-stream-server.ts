import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import { AgentRunStreamServerConfigError } from './agent-run-stream-server-config-error';
import { bearerTokenOf, isLoopbackHost, sameSecret } from '../net/http-guard';
import { sendJson as send, startLocalHttpServer } from '../net/local-http-server';
import type { StreamStore } from '../stores/streams/stream-store';
import { serveAgentRunStream } from './agent-run-sse';

/** Defaults of {@link startAgentRunStreamServer}. */
export const AGENT_RUN_STREAM_SERVER_DEFAULTS = { host: '127.0.0.1', port: 8235 } as const;

/** Options of {@link startAgentRunStreamServer}. */
export interface AgentRunStreamServerOptions {
  client: Client;
  /** The stream store the workers publish to. */
  store: StreamStore;
  /** Port (default 8235; 0 = a free port). */
  port?: number;
  /** Interface (default 127.0.0.1: this machine only; beyond loopback a `token` is required). */
  host?: string;
  /** Browser origins allowed by CORS (e.g. your chat UI's `http://localhost:3000`). None: same origin only. */
  corsOrigins?: readonly string[];
  /** When set, requests must send `Authorization: Bearer <token>` or `?access_token=<token>` (EventSource sends no headers). */
  token?: string;
  /** Extra accepted `Host` headers (`name:port`); any other is refused (DNS-rebinding protection). */
  allowedHosts?: readonly string[];
}

/** A running stream server. */
export interface AgentRunStreamServer {
  /** Base URL: runs stream at `${url}/runs/<workflow id>/stream`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Serves the live events of runs as server-sent events at `GET /runs/<workflow id>/stream` (see
 * {@link serveAgentRunStream}: `Last-Event-ID` resume, an `end` event when the run has ended). Listens on
 * 127.0.0.1 unless told otherwise, answers only requests whose `Host` names it, admits only `corsOrigins`, and
 * refuses to listen beyond loopback without a token. `durable-tools stream-server` runs one.
 *
 * @throws {@link AgentRunStreamServerConfigError} when asked to listen beyond loopback without a token.
 *
 * @example
 * ```ts
 * const sse = await startAgentRunStreamServer({ client, store, corsOrigins: ['http://localhost:3000'] });
 * // new EventSource(`${sse.url}/runs/trip-42/stream`)
 * ```
 */
export async function startAgentRunStreamServer(options: AgentRunStreamServerOptions): Promise<AgentRunStreamServer> {
  const host = options.host ?? AGENT_RUN_STREAM_SERVER_DEFAULTS.host;
  if (!isLoopbackHost(host) && !options.token) {
    throw new AgentRunStreamServerConfigError(
      `Refusing to serve run streams on ${host} without a token: whoever reaches it reads what the models say. Set a token or listen on 127.0.0.1.`,
    );
  }
  return startLocalHttpServer({
    host,
    port: options.port ?? AGENT_RUN_STREAM_SERVER_DEFAULTS.port,
    allowedHosts: options.allowedHosts,
    handle: (request, response) => handle(request, response, options),
  });
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  options: AgentRunStreamServerOptions,
): Promise<void> {
  const origin = request.headers.origin;
  if (origin !== undefined && (options.corsOrigins ?? []).includes(origin)) {
    response.setHeader('Access-Control-Allow-Origin', origin);
    response.setHeader('Access-Control-Allow-Headers', 'Authorization, Last-Event-ID');
    response.setHeader('Vary', 'Origin');
  }
  if (request.method === 'OPTIONS') return void response.writeHead(204).end();
  const url = new URL(request.url ?? '/', 'http://localhost');
  const match = /^\/runs\/([^/]+)\/stream\/?$/.exec(url.pathname);
  if (request.method !== 'GET' || !match) {
    return send(response, 404, { code: 'NOT_FOUND', message: 'GET /runs/<workflow id>/stream.' });
  }
  if (options.token !== undefined) {
    const given = bearerTokenOf(request.headers.authorization) ?? url.searchParams.get('access_token') ?? '';
    if (!sameSecret(given, options.token)) {
      return send(response, 401, { code: 'UNAUTHORIZED', message: 'Send Authorization: Bearer <token>.' });
    }
  }
  await serveAgentRunStream(request, response, {
    client: options.client,
    store: options.store,
    workflowId: decodeURIComponent(match[1]!),
  });
}
