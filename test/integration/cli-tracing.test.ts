/**
 * Issue 50: the commands that change runs honour the standard OTEL_* variables and pass their trace on. Real
 * `durable-tools` processes export OTLP over HTTP/JSON to a receiver on 127.0.0.1; no worker runs (what the commands
 * do to a run is what is traced here; the run waits on its task queue). `run` starts the run's trace (inside the
 * caller's, when TRACEPARENT hands one over) and `cancel` is a span of that trace; a read (`runs`) starts no SDK.
 * The whole tree with a worker, an approval and a real collector is otel-collector.test.ts.
 */
import { Client, Connection } from '@temporalio/client';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from '../../src/dev-server/free-port';
import { runCliToEnd } from '../support/cli-process';
import { otlpReceiver, receivedSpans, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import { testServer, uniqueTaskQueue } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

const dir = mkdtempSync(join(tmpdir(), 'durable-tools-cli-tracing-'));
const CALLER_TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN_ID = '00f067aa0ba902b7';
let receiver: OtlpReceiver;
/** The runs started here: no worker runs them, so they are terminated after. */
const started: string[] = [];

beforeAll(async () => {
  receiver = await otlpReceiver();
  writeFileSync(join(dir, 'turns.json'), JSON.stringify([{ text: 'done', final: true }]));
});

afterAll(async () => {
  receiver?.server.close();
  const client = new Client({
    connection: await Connection.connect({ address: testServer().address }),
    namespace: testServer().namespace,
  });
  for (const id of started)
    await client.workflow
      .getHandle(id)
      .terminate('test over')
      .catch(() => undefined);
  await client.connection.close();
});

function env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    TEMPORAL_ADDRESS: testServer().address,
    TEMPORAL_NAMESPACE: testServer().namespace,
    TEMPORAL_CONFIG_FILE: join(dir, 'no-temporal.toml'),
    DURABLE_TOOLS_TASK_QUEUE: uniqueTaskQueue('cli-tracing'),
    DURABLE_TOOLS_STREAM_STORE: 'off',
    OTEL_TRACES_EXPORTER: 'otlp',
    // The worker's variables, as a shell that sets them for both would: a command exports no metrics.
    OTEL_METRICS_EXPORTER: 'prometheus',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    ...extra,
  };
}

const exportedSpans = () => receivedSpans(receiver);

const workflowIdOf = (span: ReceivedSpan) =>
  span.attributes?.find((a) => a.key === 'durable_tools.workflow_id' || a.key === 'temporalWorkflowId')?.value
    .stringValue;

async function startDetached(id: string, extra: NodeJS.ProcessEnv = {}): Promise<void> {
  started.push(id);
  const run = await runCliToEnd(
    ['run', 'Trace me', '--script', join(dir, 'turns.json'), '--id', id, '--detach'],
    env(extra),
  );
  expect(run).toMatchObject({ code: 0 });
}

describe('the command line with OTEL_* set', () => {
  test("`run` is the root of the run's trace, its StartWorkflow below it; the command exports no metrics", async () => {
    const id = `cli-tracing-run-${Date.now()}`;
    await startDetached(id);
    // The command has exited: its spans were flushed before it did.
    const spans = exportedSpans();
    const start = spans.find((span) => span.name === 'StartWorkflow:agentRun' && workflowIdOf(span) === id);
    expect(start).toBeDefined();
    const command = spans.find((span) => span.spanId === start!.parentSpanId);
    expect(command?.name).toBe('durable-tools run');
    expect(command?.parentSpanId ?? '').toBe('');
    expect(receiver.bodies('/v1/metrics')).toBe('');
  });

  test("with TRACEPARENT, `run` continues the caller's trace", async () => {
    const id = `cli-tracing-caller-${Date.now()}`;
    await startDetached(id, { TRACEPARENT: `00-${CALLER_TRACE_ID}-${CALLER_SPAN_ID}-01` });
    const command = exportedSpans().find(
      (span) => span.name === 'durable-tools run' && span.traceId.toLowerCase() === CALLER_TRACE_ID,
    );
    expect(command?.parentSpanId?.toLowerCase()).toBe(CALLER_SPAN_ID);
  });

  test("`cancel` is a span of the run's trace, parented on the run's start, linked to the caller's context", async () => {
    const id = `cli-tracing-cancel-${Date.now()}`;
    await startDetached(id);
    const start = await waitFor('the start span', () =>
      exportedSpans().find((span) => span.name === 'StartWorkflow:agentRun' && workflowIdOf(span) === id),
    );
    const cancel = await runCliToEnd(
      ['cancel', id, '--no-wait'],
      env({ TRACEPARENT: `00-${CALLER_TRACE_ID}-${CALLER_SPAN_ID}-01` }),
    );
    expect(cancel).toMatchObject({ code: 0 });
    const spans = exportedSpans();
    const command = spans.find((span) => span.name === 'durable-tools cancel' && workflowIdOf(span) === id);
    expect(command).toMatchObject({ traceId: start.traceId, parentSpanId: start.spanId });
    expect(command?.links?.map((link) => link.spanId.toLowerCase())).toEqual([CALLER_SPAN_ID]);
    const request = spans.find((span) => span.name === 'CancelWorkflow' && span.parentSpanId === command!.spanId);
    expect(request?.traceId).toBe(start.traceId);
  });

  test("a collector that refuses the spans is said on stderr; the exit code stays the command's", async () => {
    const id = `cli-tracing-refused-${Date.now()}`;
    started.push(id);
    const closedPort = await findFreePort();
    const run = await runCliToEnd(
      ['run', 'Trace me', '--script', join(dir, 'turns.json'), '--id', id, '--detach'],
      env({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${closedPort}` }),
    );
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`failed: connect ECONNREFUSED 127.0.0.1:${closedPort}`);
  });

  test('a read-only command (`runs`) starts no SDK and exports nothing', async () => {
    const before = receiver.bodies('/v1/traces');
    const runs = await runCliToEnd(['runs'], env());
    expect(runs.code).toBe(0);
    expect(receiver.bodies('/v1/traces')).toBe(before);
  });
});
