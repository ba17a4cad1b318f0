/**
 * A small HTTP endpoint for async-job callbacks: `POST <path>/<callbackToken>` with the job's output as the
 * JSON body completes the waiting tool call through {@link completeJobCallback}.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { completeJobCallback, type JobCallbackDeps } from './complete-job-callback';
import { JobCallbackError } from './job-callback-error';

/** Options of {@link startJobCallbackServer}. */
export interface JobCallbackServerOptions extends JobCallbackDeps {
  /** Port to listen on (default 0: a free one). */
  port?: number;
  /** Interface to listen on (default `127.0.0.1`; put a TLS proxy in front of anything public). */
  host?: string;
  /** Path prefix of callback URLs (default `/callbacks`). */
  path?: string;
  /** Largest body accepted, in bytes (default 1 MB). */
  maxBodyBytes?: number;
}

/** A running callback endpoint. */
export interface JobCallbackServer {
  /** `http://host:port/callbacks`: append `/${ctx.callbackToken}` for a call's callback URL. */
  url: string;
  close(): Promise<void>;
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/**
 * Starts the callback endpoint. Answers `200 {"status":"completed","tool":<name>,"jobId"?:<id>}` (never the run
 * nor the call's idempotency key), or an error
 * `{"error":{"code","message","issues"}}` with 404 (unknown or forged token), 422 (output breaks the
 * schema), 409 (already completed, or no attempt waiting), 413 (body too large), 400 (not JSON), 503.
 *
 * @example
 * ```ts
 * const callbacks = await startJobCallbackServer({ client, store: transcripts, tools, port: 8090 });
 * // submit: downstream.submit(job, { callbackUrl: `${callbacks.url}/${ctx.callbackToken}` })
 * ```
 */
export async function startJobCallbackServer(options: JobCallbackServerOptions): Promise<JobCallbackServer> {
  const prefix = (options.path ?? '/callbacks').replace(/\/+$/, '');
  const maxBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const server = createServer((request, response) => {
    handle(request, response, options, prefix, maxBytes).catch((error: unknown) =>
      answer(response, 500, { error: { code: 'INTERNAL', message: String(error) } }),
    );
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}${prefix}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  deps: JobCallbackDeps,
  prefix: string,
  maxBytes: number,
): Promise<void> {
  const path = (request.url ?? '').split('?')[0] ?? '';
  if (request.method !== 'POST' || !path.startsWith(`${prefix}/`)) {
    return answer(response, 404, { error: { code: 'NOT_FOUND', message: `POST ${prefix}/<callback token>` } });
  }
  const token = decodeToken(path.slice(prefix.length + 1));
  if (token === undefined) {
    request.resume();
    return answer(response, 404, { error: { code: 'INVALID_TOKEN', message: 'The callback token is not valid.' } });
  }
  const body = await readBody(request, maxBytes);
  if (body === undefined) {
    return answer(response, 413, { error: { code: 'TOO_LARGE', message: `The body is over ${maxBytes} bytes.` } });
  }
  let output: unknown;
  try {
    output = JSON.parse(body);
  } catch {
    return answer(response, 400, { error: { code: 'NOT_JSON', message: 'The body must be the output as JSON.' } });
  }
  try {
    const { tool, jobId } = await completeJobCallback(deps, token, output);
    // The run and the call's idempotency key stay ours: the downstream learns that its output was taken, no more.
    answer(response, 200, { status: 'completed', tool, ...(jobId !== undefined ? { jobId } : {}) });
  } catch (error) {
    if (!(error instanceof JobCallbackError)) throw error;
    answer(response, error.httpStatus, { error: { code: error.code, message: error.message, issues: error.issues } });
  }
}

/** The token of the path, percent-decoded; undefined when its encoding is broken (`%E0%A4%A`). */
function decodeToken(encoded: string): string | undefined {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
}

/** The body as text, or undefined when it is over `maxBytes` (the rest is drained, not kept). */
function readBody(request: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    request.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes <= maxBytes) chunks.push(chunk);
    });
    request.on('end', () => resolve(bytes > maxBytes ? undefined : Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function answer(response: ServerResponse, status: number, body: unknown): void {
  if (response.headersSent) return;
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
