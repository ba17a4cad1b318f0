import { request as httpRequest } from 'node:http';
import { defaultPayloadConverter } from '@temporalio/common';
import { CODEC_SERVER_CORS_HEADERS, startCodecServer, type CodecServer } from '../../src/encryption/codec-server';
import { CodecServerConfigError } from '../../src/encryption/codec-server-config-error';
import { keyEntry, keyringOf } from '../support/encryption-keys';

const UI = 'http://127.0.0.1:8233';
const TOKEN = 'test-token-0123456789';
const keyring = keyringOf(keyEntry('k1'));
let open: CodecServer;
let guarded: CodecServer;

beforeAll(async () => {
  open = await startCodecServer({ keyring, port: 0, corsOrigins: [UI] });
  guarded = await startCodecServer({ keyring, port: 0, corsOrigins: [UI], token: TOKEN });
});
afterAll(async () => {
  await open.close();
  await guarded.close();
});

function jsonPayload(value: unknown) {
  const payload = defaultPayloadConverter.toPayload(value);
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
    ),
    data: Buffer.from(payload.data!).toString('base64'),
  };
}

function post(server: CodecServer, path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('the codec server', () => {
  test('encodes into ciphertext and decodes it back, in Temporal’s JSON payload form', async () => {
    const encoded = (await (await post(open, '/encode', { payloads: [jsonPayload({ card: '4111' })] })).json()) as {
      payloads: Array<{ metadata: Record<string, string>; data: string }>;
    };
    expect(Buffer.from(encoded.payloads[0]!.metadata.encoding!, 'base64').toString()).toBe('binary/encrypted');
    expect(Buffer.from(encoded.payloads[0]!.data, 'base64').toString('latin1')).not.toContain('4111');
    const decoded = (await (await post(open, '/decode', encoded)).json()) as typeof encoded;
    expect(decoded.payloads[0]).toEqual(jsonPayload({ card: '4111' }));
  });

  test('answers a preflight from the UI origin with CORS headers, and none to another origin', async () => {
    const preflight = (origin: string) =>
      fetch(`${open.url}/decode`, {
        method: 'OPTIONS',
        headers: { Origin: origin, 'Access-Control-Request-Headers': 'content-type,x-namespace' },
      });
    const allowed = await preflight(UI);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(UI);
    expect(allowed.headers.get('access-control-allow-headers')).toBe(CODEC_SERVER_CORS_HEADERS.join(', '));
    const other = await preflight('http://evil.example');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  test('with a token, refuses a request without the bearer token and serves one with it', async () => {
    const body = { payloads: [jsonPayload(1)] };
    expect((await post(guarded, '/encode', body)).status).toBe(401);
    expect((await post(guarded, '/encode', body, { Authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await post(guarded, '/encode', body, { Authorization: `Bearer ${TOKEN}` })).status).toBe(200);
  });

  test('answers a malformed body with 400 and a structured error', async () => {
    const response = await post(open, '/decode', 'not json');
    expect(response.status).toBe(400);
    await expect(response.json()).resolves.toMatchObject({ code: 'BAD_REQUEST', message: expect.any(String) });
    expect((await post(open, '/decode', { payloads: [{ data: 42 }] })).status).toBe(400);
  });

  test('answers a payload of an unknown key with 422 naming the key id', async () => {
    const other = await startCodecServer({ keyring: keyringOf(keyEntry('k9')), port: 0 });
    try {
      const encoded = await (await post(other, '/encode', { payloads: [jsonPayload('x')] })).json();
      const response = await post(open, '/decode', encoded);
      expect(response.status).toBe(422);
      await expect(response.json()).resolves.toMatchObject({ code: 'UNKNOWN_ENCRYPTION_KEY' });
    } finally {
      await other.close();
    }
  });

  test('answers a preflight asking for any header with its fixed list of headers, never an echo', async () => {
    const response = await fetch(`${open.url}/decode`, {
      method: 'OPTIONS',
      headers: { Origin: UI, 'Access-Control-Request-Headers': 'x-evil,cookie,content-type' },
    });
    expect(response.headers.get('access-control-allow-headers')).toBe('Content-Type, X-Namespace, Authorization');
    expect(response.headers.get('access-control-allow-headers')).not.toContain('x-evil');
  });

  test('refuses a request whose Host header is another name (a DNS-rebinding page) with 403', async () => {
    const decoded = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        `${open.url}/decode`,
        { method: 'POST', headers: { Host: 'evil.example', 'Content-Type': 'application/json' } },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ payloads: [] }));
    });
    expect(decoded.status).toBe(403);
    expect(JSON.parse(decoded.body)).toMatchObject({ code: 'FORBIDDEN' });
  });

  test('accepts a Host header it was told to allow', async () => {
    const server = await startCodecServer({ keyring, port: 0, allowedHosts: ['codec.internal'] });
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          `${server.url}/decode`,
          { method: 'POST', headers: { Host: `codec.internal:${server.port}` } },
          (res) => (res.resume(), resolve(res.statusCode ?? 0)),
        );
        req.on('error', reject);
        req.end(JSON.stringify({ payloads: [] }));
      });
      expect(status).toBe(200);
    } finally {
      await server.close();
    }
  });

  test('with a token, refuses the bare token without the Bearer scheme', async () => {
    const body = { payloads: [jsonPayload(1)] };
    expect((await post(guarded, '/encode', body, { Authorization: TOKEN })).status).toBe(401);
    expect((await post(guarded, '/encode', body, { Authorization: `Basic ${TOKEN}` })).status).toBe(401);
  });

  test('refuses to listen beyond loopback without a token, before binding anything', async () => {
    await expect(startCodecServer({ keyring, port: 0, host: '0.0.0.0' })).rejects.toThrow(CodecServerConfigError);
    await expect(startCodecServer({ keyring, port: 0, host: '0.0.0.0' })).rejects.toThrow(/without a token/);
  });

  test('answers an unknown path with 404', async () => {
    expect((await post(open, '/elsewhere', {})).status).toBe(404);
  });
});
