/**
 * A `traceparent` in the `_meta` of an incoming `tools/call` (MCP 2025-11-25) joins the call to the caller's trace:
 * our durable MCP server, on a Temporal client traced with `tracingClientInterceptors`, starts the call's workflow
 * inside the caller's span, so its `StartWorkflow:mcpCall` span is a child of it. Server and client are linked in
 * memory; the call runs on a worker of the recording tools.
 */
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Client } from '@temporalio/client';
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

beforeAll(async () => {
  const client = new Client({
    connection: temporal.client.connection,
    namespace: testServer().namespace,
    interceptors: await tracingClientInterceptors({ tracerProvider: tracing.tracerProvider }),
  });
  const server = createDurableMcpServer({ client, taskQueue, catalog: registry.catalog() });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  mcp = new McpClient({ name: 'test', version: '1' });
  await mcp.connect(clientSide);
});
afterAll(async () => {
  await mcp?.close();
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
