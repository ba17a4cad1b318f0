import { createServer, type IncomingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';
import { closeHttpServer, listenOnFreePort } from './local-server';

/** One request the test server received, stamped with the server's own monotonic clock. */
export interface ReceivedCall {
  /** 1-based position of the call. */
  index: number;
  /** `performance.now()` when the request arrived (headers parsed), in milliseconds. */
  atMs: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
}

/** What the server answers to one call. */
export interface CannedResponse {
  status: number;
  headers?: Record<string, string>;
  /** Sent as JSON unless it is a string. */
  body?: unknown;
}

/** A running {@link startCountingHttpServer}. */
export interface CountingHttpServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Every call received so far, in arrival order. */
  calls: ReceivedCall[];
  /** Milliseconds between consecutive calls, by the server's clock (`calls.length - 1` entries). */
  gapsMs(): number[];
  close(): Promise<void>;
}

/**
 * Starts an HTTP server on 127.0.0.1 (a free port) that counts calls and timestamps each arrival with
 * its own clock. Temporal's history keeps only an activity's final attempt, so attempt counts and the
 * delays between attempts are measured here, at the downstream.
 *
 * @param respond picks the answer to call number `index` (1-based).
 *
 * @example
 * ```ts
 * const server = await startCountingHttpServer(respondInSequence({ status: 503 }, { status: 200, body: {} }));
 * // ... run the tool ...
 * expect(server.calls).toHaveLength(2);
 * await server.close();
 * ```
 */
export async function startCountingHttpServer(
  respond: (index: number, call: ReceivedCall) => CannedResponse,
): Promise<CountingHttpServer> {
  const calls: ReceivedCall[] = [];
  const server = createServer((req, res) => {
    const call: ReceivedCall = {
      index: calls.length + 1,
      atMs: performance.now(),
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
    };
    calls.push(call);
    // Drain the request body before answering so the connection stays usable.
    req.resume();
    req.on('end', () => {
      const answer = respond(call.index, call);
      const body =
        answer.body === undefined ? '' : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
      res.writeHead(answer.status, {
        'content-type': typeof answer.body === 'string' ? 'text/plain' : 'application/json',
        ...answer.headers,
      });
      res.end(body);
    });
  });
  const port = await listenOnFreePort(server);
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    gapsMs: () => calls.slice(1).map((call, i) => call.atMs - (calls[i] as ReceivedCall).atMs),
    close: () => closeHttpServer(server),
  };
}

/** Answers call N with the N-th response; calls past the end get the last one. */
export function respondInSequence(...responses: CannedResponse[]): (index: number) => CannedResponse {
  if (responses.length === 0) throw new Error('respondInSequence needs at least one response.');
  return (index) => responses[Math.min(index, responses.length) - 1] as CannedResponse;
}
