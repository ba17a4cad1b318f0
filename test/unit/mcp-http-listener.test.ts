/**
 * The Streamable HTTP listener on its own (an MCP server without tools behind it): authentication per caller,
 * sessions bound to their caller, the session cap and idle expiry (on an injected clock), 413, the Host check and the
 * refusal to serve beyond loopback without a token.
 */
import { request as httpRequest } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { McpCaller } from '../../src/mcp/server/mcp-caller';
import { McpConfigError } from '../../src/mcp/client/mcp-config-error';
import {
  MCP_HTTP_MAX_BODY_BYTES,
  startMcpHttpListener,
  type McpHttpListener,
  type McpHttpListenerOptions,
} from '../../src/mcp/server/mcp-http-listener';
import { listenOnFreePort } from '../support/local-server';

const TOKENS = [
  { name: 'alice', token: 'alice-token' },
  { name: 'bob', token: 'bob-token' },
];
const open: McpHttpListener[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((l) => l.close()));
});

async function listen(options: Partial<McpHttpListenerOptions> = {}): Promise<McpHttpListener> {
  const listener = await startMcpHttpListener({
    port: 0,
    tokens: TOKENS,
    createServer: (_caller: McpCaller) => new Server({ name: 'bare', version: '1' }, { capabilities: {} }),
    ...options,
  });
  open.push(listener);
  return listener;
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

function post(listener: McpHttpListener, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(listener.url, {
    method: 'POST',
    body,
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      Authorization: 'Bearer alice-token',
      ...headers,
    },
  });
}

/** Opens a session the raw way (no standing GET stream) and returns its id. */
async function initialize(listener: McpHttpListener, token = 'alice-token'): Promise<string> {
  const response = await post(listener, INITIALIZE, { Authorization: `Bearer ${token}` });
  await response.text();
  expect(response.status).toBe(200);
  return response.headers.get('mcp-session-id')!;
}

const PING = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' });

describe('the MCP HTTP listener', () => {
  test('refuses a request without a valid bearer token, and a bare token without "Bearer", with 401', async () => {
    const listener = await listen();
    for (const authorization of ['Bearer wrong', 'alice-token', '']) {
      const response = await post(listener, INITIALIZE, { Authorization: authorization });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
    }
    expect((await post(listener, INITIALIZE)).status).toBe(200);
  });

  test("answers another caller's session id exactly like an unknown one", async () => {
    const listener = await listen();
    const alices = await initialize(listener);
    const headers = { 'mcp-session-id': alices, 'mcp-protocol-version': '2025-11-25' };
    const asBob = await post(listener, PING, { ...headers, Authorization: 'Bearer bob-token' });
    const unknown = await post(listener, PING, {
      ...headers,
      'mcp-session-id': '00000000-0000-4000-8000-000000000000',
      Authorization: 'Bearer bob-token',
    });
    expect(asBob.status).toBe(404);
    expect(await asBob.text()).toBe(await unknown.text());
    expect((await post(listener, PING, headers)).status).toBe(200);
  });

  test('refuses an initialize past the session cap with 503 and a JSON-RPC error, and accepts one once a session closes', async () => {
    const listener = await listen({ maxSessions: 2 });
    const first = await initialize(listener);
    await initialize(listener, 'bob-token');
    const refused = await post(listener, INITIALIZE);
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({
      jsonrpc: '2.0',
      error: { code: -32000, message: expect.stringContaining('Too many MCP sessions') },
    });
    const closed = await fetch(listener.url, {
      method: 'DELETE',
      headers: { Authorization: 'Bearer alice-token', 'mcp-session-id': first, 'mcp-protocol-version': '2025-11-25' },
    });
    expect(closed.status).toBe(200);
    expect(listener.sessionCount()).toBe(1);
    expect((await post(listener, INITIALIZE)).status).toBe(200);
  });

  test('one caller cannot hold every session: past its share (32 by default) it gets 503, another caller still initializes', async () => {
    const listener = await listen({ maxSessions: 40 });
    let alices = 0;
    for (;;) {
      const response = await post(listener, INITIALIZE);
      await response.text();
      if (response.status !== 200) {
        expect(response.status).toBe(503);
        expect(response.headers.get('retry-after')).toBe('60');
        break;
      }
      alices += 1;
      expect(alices).toBeLessThanOrEqual(40);
    }
    expect(alices).toBe(32);
    expect((await post(listener, INITIALIZE, { Authorization: 'Bearer bob-token' })).status).toBe(200);
  });

  test('a per-caller cap of its own (maxSessionsPerCaller) is kept', async () => {
    const listener = await listen({ maxSessionsPerCaller: 1 });
    await initialize(listener);
    expect((await post(listener, INITIALIZE)).status).toBe(503);
    await initialize(listener, 'bob-token');
  });

  test('closes and forgets sessions idle past the timeout (injected clock); their ids are then unknown', async () => {
    let now = 1_000_000;
    const listener = await listen({ sessionIdleTimeoutMs: 60_000, maxSessionsPerCaller: 50, now: () => now });
    const ids = [];
    for (let i = 0; i < 50; i++) ids.push(await initialize(listener));
    expect(listener.sessionCount()).toBe(50);
    now += 59_999;
    expect(await listener.closeIdleSessions()).toBe(0);
    now += 1;
    expect(await listener.closeIdleSessions()).toBe(50);
    expect(listener.sessionCount()).toBe(0);
    const stale = await post(listener, PING, { 'mcp-session-id': ids[0]!, 'mcp-protocol-version': '2025-11-25' });
    expect(stale.status).toBe(404);
  });

  test('a session in use is not idle: a request resets its idle time', async () => {
    let now = 0;
    const listener = await listen({ sessionIdleTimeoutMs: 60_000, now: () => now });
    const id = await initialize(listener);
    now += 50_000;
    const headers = { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' };
    expect((await post(listener, PING, headers)).status).toBe(200);
    now += 50_000;
    expect(await listener.closeIdleSessions()).toBe(0);
    now += 10_000;
    expect(await listener.closeIdleSessions()).toBe(1);
  });

  test('an SDK client that connects and goes away leaves no session behind once it idles out', async () => {
    let now = 0;
    const listener = await listen({ sessionIdleTimeoutMs: 1_000, now: () => now });
    for (let i = 0; i < 5; i++) {
      const client = new McpClient({ name: 'sdk', version: '1' });
      const transport = new StreamableHTTPClientTransport(new URL(listener.url), {
        requestInit: { headers: { Authorization: 'Bearer bob-token' } },
      });
      await client.connect(transport);
      await client.ping();
      await transport.close();
    }
    // Closing the transport ends its standing GET stream; wait until the listener has seen every end.
    now += 1_000;
    while ((await listener.closeIdleSessions(), listener.sessionCount()) > 0) {
      await new Promise((r) => setTimeout(r, 50));
      now += 1_000;
    }
    expect(listener.sessionCount()).toBe(0);
  });

  test('answers a body over 4 MiB with 413 and a JSON-RPC error, with or without a Content-Length', async () => {
    const listener = await listen();
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'ping',
      params: { pad: 'x'.repeat(MCP_HTTP_MAX_BODY_BYTES) },
    });
    const response = await post(listener, big);
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });

    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        listener.url,
        { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: 'Bearer alice-token' } },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 5; i++) req.write('x'.repeat(1024 * 1024));
      req.end();
    });
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body)).toMatchObject({ error: { code: -32600 } });
  });

  test('refuses a request whose Host header names another server (DNS rebinding) with 403', async () => {
    const listener = await listen();
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        listener.url,
        {
          method: 'POST',
          headers: { Host: 'evil.example', 'Content-Type': 'application/json', Authorization: 'Bearer alice-token' },
        },
        (res) => (res.resume(), resolve(res.statusCode ?? 0)),
      );
      req.on('error', reject);
      req.end(INITIALIZE);
    });
    expect(status).toBe(403);
  });

  test('refuses to serve beyond loopback without authentication, before binding anything', async () => {
    await expect(listen({ tokens: [], host: '0.0.0.0' })).rejects.toThrow(McpConfigError);
    await expect(listen({ tokens: [], host: '0.0.0.0' })).rejects.toThrow(/--insecure-no-auth/);
  });

  test('without authentication on loopback every caller is the shared identity and may use any session', async () => {
    const callers: McpCaller[] = [];
    const listener = await listen({
      tokens: [],
      createServer: (caller) => (
        callers.push(caller),
        new Server({ name: 'bare', version: '1' }, { capabilities: {} })
      ),
    });
    const id = await initialize(listener);
    const response = await post(listener, PING, {
      'mcp-session-id': id,
      'mcp-protocol-version': '2025-11-25',
      Authorization: '',
    });
    expect(response.status).toBe(200);
    expect(callers).toEqual([{ subject: 'shared' }]);
  });
});

describe('the MCP HTTP listener in OAuth mode, its issuer not answering', () => {
  /** An issuer URL on a loopback port nothing listens on. */
  async function silentIssuer(): Promise<string> {
    const server = createNetServer();
    const port = await listenOnFreePort(server);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return `http://127.0.0.1:${port}`;
  }

  test('answers a token it cannot check with 503 and Retry-After, not 401 (the token may be good)', async () => {
    const listener = await listen({ tokens: [], oauth: { issuer: await silentIssuer() } });
    const response = await post(listener, INITIALIZE, { Authorization: 'Bearer some.jwt.here' });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('30');
    expect(response.headers.get('www-authenticate')).toBeNull();
    expect(await response.text()).not.toContain('some.jwt.here');
  });

  test('serves its protected resource metadata to any origin, and only with GET', async () => {
    const listener = await listen({ tokens: [], oauth: { issuer: await silentIssuer() } });
    const url = listener.resourceMetadataUrl!;
    const read = await fetch(url, { headers: { Origin: 'https://client.example' } });
    expect(read.status).toBe(200);
    expect(read.headers.get('access-control-allow-origin')).toBe('*');
    expect((await read.json()) as unknown).toMatchObject({ resource: listener.url });
    expect((await fetch(url, { method: 'POST' })).status).toBe(405);
  });
});
