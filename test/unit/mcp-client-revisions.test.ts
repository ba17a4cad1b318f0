/**
 * The MCP client of the worker against a server of the 2026-07-28 revision (stateless, `server/discover`): the
 * revision it negotiates, a stream cut mid-call re-issued with the same idempotency key, the list cache following
 * the server's `ttlMs` (on an injected clock), and the active span's `traceparent` in each call's `_meta`. The
 * server is `@modelcontextprotocol/server` v2 in this process (test/support/mcp-modern-server.ts).
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { classify } from '../../src/failures/classify';
import { McpClientPool, MCP_IDEMPOTENCY_KEY_META } from '../../src/mcp/client/mcp-client-pool';
import { parseMcpConfig } from '../../src/mcp/client/mcp-config';
import { classifyMcpCallError } from '../../src/mcp/client/mcp-errors';
import { createMcpHost } from '../../src/mcp/client/mcp-host';
import { startModernMcpServer, type ModernMcpServer } from '../support/mcp-modern-server';

let server: ModernMcpServer;
const closers: (() => Promise<void>)[] = [];
beforeAll(async () => {
  server = await startModernMcpServer();
});
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});
afterAll(async () => {
  await server.stop();
});

function pool(): McpClientPool {
  const created = new McpClientPool(parseMcpConfig({ mcpServers: { modern: { url: server.url } } }).mcpServers);
  closers.push(() => created.close());
  return created;
}

const text = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;

describe('a 2026-07-28 server', () => {
  test('is used statelessly: server/discover instead of initialize, the revision in every request', async () => {
    const before = server.methods.length;
    const clients = pool();
    expect(await clients.connectionInfo('modern')).toEqual({ era: 'modern', protocolVersion: '2026-07-28' });
    await clients.callTool('modern', 'lookup', { q: 'a' });
    const methods = server.methods.slice(before);
    expect(methods).toContain('server/discover');
    expect(methods).toContain('tools/call');
    expect(methods).not.toContain('initialize');
    const call = server.calls.at(-1)!;
    expect(call.protocolVersion).toBe('2026-07-28');
    expect(call.meta['io.modelcontextprotocol/protocolVersion']).toBe('2026-07-28');
    expect(call.meta['io.modelcontextprotocol/clientInfo']).toEqual({ name: 'durable-tools', version: '0.1.0' });
  });

  test.each([
    ['mid-stream (after a progress event)', true],
    ['before the answer is written', false],
  ])(
    'a call whose HTTP stream is cut %s is re-issued with the same key: one effect, the first work’s result',
    async (_where, streamed) => {
      const key = `cut-${streamed ? 'sse' : 'json'}`;
      const reissues: number[] = [];
      const result = await pool().callTool(
        'modern',
        'book',
        { item: 'room', cut: true },
        {
          idempotencyKey: key,
          reissue: true,
          onReissue: (issue) => reissues.push(issue),
          ...(streamed ? { onProgress: () => {} } : {}),
        },
      );
      expect(server.cuts).toContain(key);
      expect(reissues).toEqual([2]);
      const sent = server.calls.filter((call) => call.meta[MCP_IDEMPOTENCY_KEY_META] === key);
      expect(sent).toHaveLength(2);
      expect(server.effects.get(key)).toBe(1);
      expect(text(result)).toMatch(/^booked room #\d+$/);
    },
  );

  test('without leave to re-issue, a cut call fails as transient UNAVAILABLE that may have had an effect', async () => {
    const key = 'cut-no-reissue';
    const failure = await pool()
      .callTool('modern', 'book', { item: 'room', cut: true }, { idempotencyKey: key, onProgress: () => {} })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(classify(classifyMcpCallError('modern', 'book', failure, false))).toMatchObject({
      kind: 'transient',
      code: 'UNAVAILABLE',
      mayHaveHadEffect: true,
    });
    expect(server.calls.filter((call) => call.meta[MCP_IDEMPOTENCY_KEY_META] === key)).toHaveLength(1);
  });

  test('the traceparent of the active span arrives in the call’s _meta', async () => {
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    try {
      const span = new BasicTracerProvider().getTracer('test').startSpan('agent step');
      const clients = pool();
      await context.with(trace.setSpan(context.active(), span), () =>
        clients.callTool('modern', 'lookup', { q: 'traced' }),
      );
      span.end();
      const { traceId, spanId } = span.spanContext();
      expect(server.calls.at(-1)!.meta.traceparent).toBe(`00-${traceId}-${spanId}-01`);
    } finally {
      context.disable();
    }
    await pool().callTool('modern', 'lookup', { q: 'untraced' });
    expect(server.calls.at(-1)!.meta.traceparent).toBeUndefined();
  });
});

describe('the list cache', () => {
  test('follows the ttlMs the server sends with its list, on the host’s clock', async () => {
    let now = 1_000_000;
    const host = createMcpHost(
      { mcpServers: { modern: { url: server.url } }, listTtlMs: 5_000 },
      { now: () => now, warn: () => {} },
    );
    closers.push(() => host.close());
    const lists = () => server.methods.filter((method) => method === 'tools/list').length;
    server.setListHints({ ttlMs: 30_000, cacheScope: 'public' });
    const before = lists();
    await host.refresh();
    expect(lists()).toBe(before + 1);
    expect(host.listingHints()).toEqual({ modern: { ttlMs: 30_000, cacheScope: 'public' } });
    expect(host.tools().map((tool) => tool.contract.name)).toEqual(['modern__book', 'modern__lookup']);

    now += 29_999; // past the configured 5 s, within the server's 30 s
    await host.refresh();
    expect(lists()).toBe(before + 1);
    now += 1;
    server.setListHints({ ttlMs: 0, cacheScope: 'private' });
    await host.refresh();
    expect(lists()).toBe(before + 2);
    expect(host.listingHints()).toEqual({ modern: { ttlMs: 0, cacheScope: 'private' } });

    await host.refresh(); // ttlMs 0: stale at once, listed at every refresh, whatever the clock
    expect(lists()).toBe(before + 3);
  });
});

describe('the protocol setting of a server', () => {
  test('2026-07-28 pins the revision: no fallback, and the server is used statelessly', async () => {
    const pinned = new McpClientPool(
      parseMcpConfig({ mcpServers: { modern: { url: server.url, protocol: '2026-07-28' } } }).mcpServers,
    );
    closers.push(() => pinned.close());
    expect(await pinned.connectionInfo('modern')).toEqual({ era: 'modern', protocolVersion: '2026-07-28' });
  });

  test('2025-11-25 skips the probe: a 2026-07-28-only server refuses the initialize handshake', async () => {
    const before = server.methods.length;
    const legacy = new McpClientPool(
      parseMcpConfig({ mcpServers: { modern: { url: server.url, protocol: '2025-11-25' } } }).mcpServers,
    );
    closers.push(() => legacy.close());
    await expect(legacy.connectionInfo('modern')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(server.methods.slice(before)).toEqual(['initialize']);
  });
});
