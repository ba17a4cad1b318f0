import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import { AgentRunStreamServerConfigError } from './agent-run-stream-server-config-error';
import { isLoopbackHost } from '../net/http-guard';
import { sendJson as send, startLocalHttpServer } from '../net/local-http-server';
import type { StreamStore } from '../stores/streams/stream-store';
import { serveAgentRunStream } from './agent-run-sse';
import { streamReaderOf, type AgentRunStreamReaders } from './agent-run-stream-readers';
import { AGENT_RUN_STREAM_LIMITS, AgentRunStreamSlots } from './agent-run-stream-slots';

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
  /**
   * The stream token: `Authorization: Bearer <token>` reads every run (for the backend of an app, which started the
   * runs itself). A token in the query string (`?access_token=`) is always refused.
   */
  token?: string;
  /**
   * The other readers, each reading some runs: a bearer token → its reader (`mcpStreamReaders` gives the MCP server's
   * callers, each reading the runs it started through that server). A run a reader may not read is answered like one
   * that does not exist. With `token` or `readers` set, a request without a known token gets 401.
   */
  readers?: AgentRunStreamReaders;
  /** Open streams at most (default 100); past it a request gets 503 with `Retry-After`. */
  maxStreams?: number;
  /** Open streams of one reader at most (default 16); past it that reader gets 503 with `Retry-After`. */
  maxStreamsPerReader?: number;
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
 * refuses to listen beyond loopback without a token or readers. Each reader reads only the runs it may read (the
 * stream token every run; see `readers`), and a run it may not read is answered 404 like one that does not exist;
 * the token travels only in the `Authorization` header; open streams are capped in total and per reader (503 with
 * `Retry-After`); a path that is not valid percent-encoding is a 400. `durable-tools stream-server` runs one.
 *
 * @throws {@link AgentRunStreamServerConfigError} when asked to listen beyond loopback without a token or readers.
 *
 * @example
 * ```ts
 * const sse = await startAgentRunStreamServer({ client, store, corsOrigins: ['http://localhost:3000'] });
 * // new EventSource(`${sse.url}/runs/trip-42/stream`)
 * ```
 */
export async function startAgentRunStreamServer(options: AgentRunStreamServerOptions): Promise<AgentRunStreamServer> {
  const host = options.host ?? AGENT_RUN_STREAM_SERVER_DEFAULTS.host;
  if (!isLoopbackHost(host) && !options.token && !options.readers) {
    throw new AgentRunStreamServerConfigError(
      `Refusing to serve run streams on ${host} without a token: whoever reaches it reads what the models say. Set a token or listen on 127.0.0.1.`,
    );
  }
  const slots = new AgentRunStreamSlots(options);
  return startLocalHttpServer({
    host,
    port: options.port ?? AGENT_RUN_STREAM_SERVER_DEFAULTS.port,
    allowedHosts: options.allowedHosts,
    handle: (request, response) => handle(request, response, options, slots),
  });
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  options: AgentRunStreamServerOptions,
  slots: AgentRunStreamSlots,
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
  const reader = await streamReaderOf(request, url, options);
  if ('status' in reader) return send(response, reader.status, reader.body);
  const workflowId = decoded(match[1]!);
  if (workflowId === undefined) {
    return send(response, 400, {
      code: 'BAD_REQUEST',
      message: 'The run id in the path is not valid percent-encoding.',
    });
  }
  const release = slots.take(reader.id);
  if (!release) {
    response.setHeader('Retry-After', String(AGENT_RUN_STREAM_LIMITS.retryAfterSeconds));
    return send(response, 503, { code: 'TOO_MANY_STREAMS', message: 'Too many open streams: try again later.' });
  }
  response.once('close', release);
  try {
    await serveAgentRunStream(request, response, {
      client: options.client,
      store: options.store,
      workflowId,
      mayRead: (run) => reader.mayRead(run),
    });
  } finally {
    release();
  }
}

/** The percent-decoded path segment, or undefined when its encoding is broken (`%E0%A4%A`). */
function decoded(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
