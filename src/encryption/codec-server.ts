import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Payload } from '@temporalio/common';
import { bearerTokenOf, isLoopbackHost, sameSecret } from '../net/http-guard';
import { sendJson as send, startLocalHttpServer } from '../net/local-http-server';
import { EncryptionCodec } from './encryption-codec';
import { EncryptionError } from './encryption-error';
import type { EncryptionKeyring } from './encryption-keys';
import { CodecServerConfigError } from './codec-server-config-error';

/** Defaults of {@link startCodecServer}. */
export const CODEC_SERVER_DEFAULTS = {
  host: '127.0.0.1',
  port: 8888,
  /** Largest request body accepted (Temporal's payloads stay under 2 MB each; base64 adds a third). */
  maxBodyBytes: 16 * 1024 * 1024,
} as const;

/**
 * The request headers a CORS preflight may ask for (what the Temporal web UI sends); a preflight gets this list,
 * never an echo of what it asked.
 */
export const CODEC_SERVER_CORS_HEADERS = ['Content-Type', 'X-Namespace', 'Authorization'] as const;

/** Options of {@link startCodecServer}. */
export interface CodecServerOptions {
  keyring: EncryptionKeyring;
  /** Port (default 8888; 0 = a free port). */
  port?: number;
  /** Interface to listen on (default 127.0.0.1: only this machine). */
  host?: string;
  /** Browser origins allowed by CORS, e.g. the web UI's `http://127.0.0.1:8233`. None: no browser access. */
  corsOrigins?: readonly string[];
  /** When set, every request must carry `Authorization: Bearer <token>`. Required beyond loopback. */
  token?: string;
  /**
   * Extra accepted `Host` header values (`name:port`, e.g. how browsers reach a server bound beyond loopback);
   * `127.0.0.1`, `localhost`, `[::1]` and the bound interface with the port always are. Any other `Host` (a
   * DNS-rebinding page sends its own name) is refused with 403.
   */
  allowedHosts?: readonly string[];
}

/** A running codec server. */
export interface CodecServer {
  /** Base URL, for `--ui-codec-endpoint` and `temporal --codec-endpoint`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** JSON form of a payload on the codec server protocol: metadata values and data in base64. */
interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

/**
 * Starts a Temporal codec server: `POST /encode` and `POST /decode` take and return `{ payloads: [...] }` in
 * Temporal's JSON form, with the keyring's {@link EncryptionCodec}. The web UI (started with
 * `--ui-codec-endpoint <url>`) and `temporal workflow show --codec-endpoint <url>` then show payloads in clear
 * to whoever can reach this server, while the history keeps ciphertext. CORS admits only `corsOrigins` and the
 * headers of {@link CODEC_SERVER_CORS_HEADERS}; the `Host` header must name this server (DNS-rebinding protection);
 * with a `token`, requests need `Authorization: Bearer <token>`. Errors answer JSON `{ code, message }`.
 *
 * @throws {@link CodecServerConfigError} when asked to listen beyond loopback without a token.
 *
 * @example
 * ```ts
 * const codec = await startCodecServer({ keyring, corsOrigins: ['http://127.0.0.1:8233'] });
 * ```
 */
export async function startCodecServer(options: CodecServerOptions): Promise<CodecServer> {
  const host = options.host ?? CODEC_SERVER_DEFAULTS.host;
  if (!isLoopbackHost(host) && !options.token) {
    throw new CodecServerConfigError(
      `Refusing to serve the codec server on ${host} without a token: whoever reaches it reads every payload. Set a token or listen on 127.0.0.1.`,
    );
  }
  const codec = new EncryptionCodec(options.keyring);
  return startLocalHttpServer({
    host,
    port: options.port ?? CODEC_SERVER_DEFAULTS.port,
    allowedHosts: options.allowedHosts,
    handle: (request, response) => handle(request, response, codec, options),
  });
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  codec: EncryptionCodec,
  options: CodecServerOptions,
): Promise<void> {
  allowOrigin(request, response, options.corsOrigins ?? []);
  if (request.method === 'OPTIONS') return void response.writeHead(204).end();
  const path = (request.url ?? '').split('?')[0]!.replace(/\/+$/, '');
  const operation = path.endsWith('/encode') ? 'encode' : path.endsWith('/decode') ? 'decode' : undefined;
  if (request.method !== 'POST' || !operation) {
    return send(response, 404, { code: 'NOT_FOUND', message: 'POST /encode or POST /decode.' });
  }
  if (options.token !== undefined && !bearerMatches(request.headers.authorization, options.token)) {
    return send(response, 401, { code: 'UNAUTHORIZED', message: 'Send Authorization: Bearer <token>.' });
  }
  const payloads = await readPayloads(request);
  if (typeof payloads === 'string') return send(response, 400, { code: 'BAD_REQUEST', message: payloads });
  try {
    const result = await (operation === 'encode' ? codec.encode(payloads) : codec.decode(payloads));
    send(response, 200, { payloads: result.map(toJson) });
  } catch (error) {
    if (!(error instanceof EncryptionError)) throw error;
    send(response, 422, { code: error.code, message: error.message });
  }
}

function allowOrigin(request: IncomingMessage, response: ServerResponse, origins: readonly string[]): void {
  const origin = request.headers.origin;
  if (origin === undefined || !origins.includes(origin)) return;
  response.setHeader('Access-Control-Allow-Origin', origin);
  response.setHeader('Vary', 'Origin');
  response.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
  response.setHeader('Access-Control-Allow-Headers', CODEC_SERVER_CORS_HEADERS.join(', '));
  response.setHeader('Access-Control-Allow-Credentials', 'true');
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const given = bearerTokenOf(header);
  return given !== undefined && sameSecret(given, token);
}

/** The request's payloads, or why they cannot be read. */
async function readPayloads(request: IncomingMessage): Promise<Payload[] | string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > CODEC_SERVER_DEFAULTS.maxBodyBytes)
      return `The body is over ${CODEC_SERVER_DEFAULTS.maxBodyBytes} bytes.`;
    chunks.push(chunk as Buffer);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return 'The body is not JSON.';
  }
  const payloads = (body as { payloads?: unknown } | null)?.payloads;
  if (!Array.isArray(payloads)) return 'The body must be {"payloads": [...]}.';
  const parsed = payloads.map(fromJson);
  return parsed.some((p) => p === undefined)
    ? 'A payload is not {metadata: {key: base64}, data: base64}.'
    : (parsed as Payload[]);
}

function fromJson(value: unknown): Payload | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { metadata = {}, data = '' } = value as JsonPayload;
  if (typeof data !== 'string' || typeof metadata !== 'object' || metadata === null) return undefined;
  const entries = Object.entries(metadata);
  if (entries.some(([, v]) => typeof v !== 'string')) return undefined;
  return {
    metadata: Object.fromEntries(entries.map(([k, v]) => [k, Buffer.from(v, 'base64')])),
    data: Buffer.from(data, 'base64'),
  };
}

function toJson(payload: Payload): JsonPayload {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? []).toString('base64')]),
    ),
    data: Buffer.from(payload.data ?? []).toString('base64'),
  };
}
