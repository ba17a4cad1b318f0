/**
 * A `traceparent` in the `_meta` of an incoming `tools/call` (MCP 2025-11-25, and 2026-07-28 over HTTP) joins the call to the caller's trace:
 * our durable MCP server, on a Temporal client traced with `tracingClientInterceptors`, starts the call's workflow
 * inside the caller's span, so its `StartWorkflow:mcpCall` span is a child of it. Server and client are linked in
 * memory; the call runs on a worker of the recording tools.
 */
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Client } from '@temporalio/client';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttpTransport,
} from '@modelcontextprotocol/client';
import { startMcpHttpListener, type McpHttpListener } from '../../src/mcp/server/mcp-http-listener';
import { modernMcpServerFactory } from '../../src/mcp/server/mcp-modern-server';
import { createDurableMcpServer } from '../../src/mcp/server/mcp-server';
import { tracingClientInterceptors } from '../../src/telemetry/client-tracing';
import { createToolRegistry } from '../../src/tools/tool-registry';
import { inMemoryTracing } from '../support/in-memory-telemetry';
import { createTestWorker, testServer, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { createRecordingTools } from '../support/test-tools';

const taskQueue = uniqueTaskQueue('mcp-trace-context');
const registry = createToolRegistry(createRecordingTools().tools);
const temporal = useTestTemporal({
  worker: (temporal) => createTestWorker(temporal, { tools: registry.list(), taskQueue }),
});
const tracing = inMemoryTracing();
let mcp: McpClient;
let listener: McpHttpListener | undefined;
let modern: ModernClient | undefined;

beforeAll(async () => {
  const client = new Client({
    connection: temporal.client.connection,
    namespace: testServer().namespace,
    interceptors: await tracingClientInterceptors({ tracerProvider: tracing.tracerProvider }),
  });
  const served = { client, taskQueue, catalog: registry.catalog() };
  const server = createDurableMcpServer(served);
  listener = await startMcpHttpListener({
    port: 0,
    createServer: (caller) => createDurableMcpServer({ ...served, caller }),
    createModernServer: modernMcpServerFactory(served),
  });
  modern = new ModernClient(
    { name: 'test-2026', version: '1' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await modern.connect(new ModernHttpTransport(new URL(listener.url)));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  mcp = new McpClient({ name: 'test', version: '1' });
  await mcp.connect(clientSide);
});
afterAll(async () => {
  await mcp?.close();
  await modern?.close();
  await listener?.close();
});

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN_ID = '00f067aa0ba902b7';

/** The StartWorkflow spans of the MCP calls so far. */
const startSpans = () => tracing.spans().filter((span) => span.name === 'StartWorkflow:mcpToolCall');

test("a tools/call with _meta.traceparent starts its workflow as a child of the caller's span", async () => {
  const result = await mcp.callTool({
    name: 'add',
    arguments: { a: 20, b: 22 },
    _meta: { traceparent: `00-${TRACE_ID}-${CALLER_SPAN_ID}-01`, tracestate: 'vendor=value' },
  });
  expect(result.structuredContent).toEqual({ sum: 42 });
  const joined = startSpans().filter((span) => span.spanContext().traceId === TRACE_ID);
  expect(joined).toHaveLength(1);
  expect(joined[0]!.parentSpanId).toBe(CALLER_SPAN_ID);
  expect(joined[0]!.spanContext().traceState?.get('vendor')).toBe('value');
});

test('a tools/call without a traceparent, or with a malformed one, starts a trace of its own', async () => {
  const before = startSpans().length;
  await mcp.callTool({ name: 'add', arguments: { a: 1, b: 1 } });
  await mcp.callTool({ name: 'add', arguments: { a: 1, b: 2 }, _meta: { traceparent: 'not-a-traceparent' } });
  const fresh = startSpans().slice(before);
  expect(fresh).toHaveLength(2);
  for (const span of fresh) {
    expect(span.parentSpanId).toBeUndefined();
    expect(span.spanContext().traceId).not.toBe(TRACE_ID);
  }
});

test("2026-07-28: a stateless tools/call with _meta.traceparent starts its workflow as a child of the caller's span", async () => {
  const spanId = '00f067aa0ba90226';
  const result = await modern!.callTool({
    name: 'add',
    arguments: { a: 2, b: 40 },
    _meta: { traceparent: `00-${TRACE_ID}-${spanId}-01` },
  });
  expect(result.structuredContent).toEqual({ sum: 42 });
  const joined = startSpans().filter((span) => span.parentSpanId === spanId);
  expect(joined).toHaveLength(1);
  expect(joined[0]!.spanContext().traceId).toBe(TRACE_ID);
});
