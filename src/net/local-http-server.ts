import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isAllowedHostHeader } from './http-guard';

/** The interface and port a {@link startLocalHttpServer} server is bound to (the port once known, for port 0). */
export interface BoundAddress {
  host: string;
  port: number;
}

/** Options of {@link startLocalHttpServer}. */
export interface LocalHttpServerOptions {
  host: string;
  /** Port (0 = a free port). */
  port: number;
  /** Extra accepted `Host` headers (see {@link isAllowedHostHeader}). */
  allowedHosts?: readonly string[] | undefined;
  /** Answers a request whose `Host` header names this server; what it throws answers 500 `{ code, message }`. */
  handle(request: IncomingMessage, response: ServerResponse, bound: BoundAddress): Promise<void>;
}

/** A running {@link startLocalHttpServer} server. */
export interface LocalHttpServer {
  /** Base URL, `http://host:port` (an IPv6 host in brackets). */
  url: string;
  port: number;
  /** Stops listening and drops the open connections. */
  close(): Promise<void>;
}

/**
 * Starts an HTTP server for a local tool (the codec server, the run stream server): listens on `host:port`, refuses
 * with 403 any request whose `Host` header does not name it (DNS-rebinding protection), passes the others to
 * `handle`, and answers 500 `{ code: 'INTERNAL', message }` when `handle` throws. Whether the host needs a token is
 * the caller's check, before it starts.
 */
export async function startLocalHttpServer(options: LocalHttpServerOptions): Promise<LocalHttpServer> {
  const { host } = options;
  let port = options.port;
  const server = createServer((request, response) => {
    answer(request, response, options, { host, port }).catch((error: unknown) => {
      sendJson(response, 500, { code: 'INTERNAL', message: error instanceof Error ? error.message : String(error) });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return { url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`, port, close: () => closeServer(server) };
}

async function answer(
  request: IncomingMessage,
  response: ServerResponse,
  options: LocalHttpServerOptions,
  bound: BoundAddress,
): Promise<void> {
  const server = { ...bound, ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}) };
  if (!isAllowedHostHeader(request.headers.host, server)) {
    return sendJson(response, 403, {
      code: 'FORBIDDEN',
      message: `Host "${request.headers.host ?? ''}" is not this server (DNS rebinding protection).`,
    });
  }
  await options.handle(request, response, bound);
}

/** Answers `status` with `body` as JSON; once the headers are sent, only ends the response. */
export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  if (response.headersSent) return void response.end();
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
