/**
 * `durable-tools mcp` traces its own Temporal client when the OTEL_* variables ask for traces: a `tools/call` with
 * `_meta.traceparent` starts its workflow in a span that is a child of the caller's span, exported (OTLP over
 * HTTP/JSON) to a receiver on 127.0.0.1. The command runs as a real process, without a worker (the call's start is
 * what is traced here; the test terminates the call after).
 */
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { startCli, waitForCliOutput, type CliProcess } from '../support/cli-process';
import { otlpReceiver, receivedSpans, type OtlpReceiver } from '../support/otlp-receiver';
import { testServer, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

const temporal = useTestTemporal();
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN_ID = '00f067aa0ba902b7';
let receiver: OtlpReceiver;
let cli: CliProcess;
let url: string;

beforeAll(async () => {
  receiver = await otlpReceiver();
  cli = startCli(['mcp', '--tools', 'test/support/test-tools-module.ts', '--http', '--port', '0', '--no-worker'], {
    TEMPORAL_ADDRESS: testServer().address,
    TEMPORAL_NAMESPACE: testServer().namespace,
    DURABLE_TOOLS_MCP_TOKEN: '',
    DURABLE_TOOLS_MCP_TOKENS: '',
    DURABLE_TOOLS_TASK_QUEUE: uniqueTaskQueue('mcp-command-tracing'),
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: '200',
  });
  await waitForCliOutput(cli, /MCP server at (http:\S+):/);
  url = /MCP server at (http:\S+):/.exec(cli.stderr())![1]!;
});

afterAll(async () => {
  if (cli?.child.exitCode === null) {
    process.kill(-cli.child.pid!, 'SIGTERM');
    await cli.exited;
  }
  receiver?.server.close();
});

const exportedSpans = () => receivedSpans(receiver);

test("a tools/call with _meta.traceparent starts its workflow in a child span of the caller's, exported by OTLP", async () => {
  const mcp = new McpClient({ name: 'test', version: '1' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    const created = await mcp.request(
      {
        method: 'tools/call',
        params: {
          name: 'add',
          arguments: { a: 20, b: 22 },
          task: { ttl: 60_000 },
          _meta: { traceparent: `00-${TRACE_ID}-${CALLER_SPAN_ID}-01` },
        },
      },
      CreateTaskResultSchema,
    );
    const span = await waitFor('the StartWorkflow span at the receiver', () =>
      exportedSpans().find((s) => s.name === 'StartWorkflow:mcpToolCall'),
    );
    expect(span.traceId.toLowerCase()).toBe(TRACE_ID);
    expect(span.parentSpanId?.toLowerCase()).toBe(CALLER_SPAN_ID);
    await temporal.client.workflow.getHandle(created.task.taskId).terminate('test over');
  } finally {
    await mcp.close();
  }
});
