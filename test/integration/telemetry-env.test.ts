/**
 * Issue 15: a worker process (`durable-tools worker`) exports traces and metrics where the standard OTEL_*
 * variables say — here OTLP over HTTP/JSON to a receiver on 127.0.0.1 — and serves Temporal's runtime metrics
 * for Prometheus with `--prometheus`.
 */
import { Client, Connection } from '@temporalio/client';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { findFreePort } from '../../src/dev-server/free-port';
import { startCli, type CliProcess } from '../support/cli-process';
import { otlpReceiver, type OtlpReceiver } from '../support/otlp-receiver';
import { testServer, uniqueTaskQueue } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

const dir = mkdtempSync(join(tmpdir(), 'durable-tools-otel-'));
const taskQueue = uniqueTaskQueue('otel-env');
let receiver: OtlpReceiver;
let prometheusPort: number;
let worker: CliProcess;
let client: Client;

beforeAll(async () => {
  receiver = await otlpReceiver();
  prometheusPort = await findFreePort();
  worker = startCli(['worker', '--tools', 'test/support/cli-tools.ts', '--prometheus', `127.0.0.1:${prometheusPort}`], {
    TEMPORAL_ADDRESS: testServer().address,
    TEMPORAL_NAMESPACE: testServer().namespace,
    TEMPORAL_CONFIG_FILE: join(dir, 'no-temporal.toml'),
    DURABLE_TOOLS_TASK_QUEUE: taskQueue,
    DURABLE_TOOLS_SQLITE_PATH: join(dir, 'keys.sqlite'),
    DURABLE_TOOLS_TRANSCRIPT_STORE: 'memory',
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_METRICS_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: '200',
    OTEL_METRIC_EXPORT_INTERVAL: '500',
    OTEL_METRIC_EXPORT_TIMEOUT: '400',
  });
  await waitFor('the worker to start', () => {
    if (worker.child.exitCode !== null) throw new Error(`worker exited:\n${worker.stdout()}\n${worker.stderr()}`);
    return /durable-tools worker: \d+ tools/.test(worker.stdout());
  });
  client = new Client({
    connection: await Connection.connect({ address: testServer().address }),
    namespace: testServer().namespace,
  });
  const handle = await startAgentRun(
    client,
    {
      goal: 'Order a book',
      model: {
        provider: 'scripted',
        script: [
          { toolCalls: [{ name: 'create_order', arguments: { item: 'book' } }] },
          { text: 'Done.', final: true },
        ],
      },
    },
    { taskQueue },
  );
  await waitForAgentRun(handle);
});

afterAll(async () => {
  if (worker?.child.exitCode === null) {
    process.kill(-worker.child.pid!, 'SIGTERM');
    await worker.exited;
  }
  await client?.connection.close();
  receiver?.server.close();
});

describe('a worker process configured by OTEL_* variables', () => {
  test('exports the spans of a run to the OTLP endpoint, under its default service name', async () => {
    const traces = await waitFor('the run spans at the receiver', () => {
      const body = receiver.bodies('/v1/traces');
      return body.includes('"RunWorkflow:agentRun"') && body.includes('"execute_tool create_order"') && body;
    });
    expect(traces).toContain('"RunActivity:create_order"');
    expect(traces).toContain('"durable-tools-worker"');
  });

  test("exports the engine's metrics to the OTLP endpoint", async () => {
    const metrics = await waitFor('the tool call metric at the receiver', () => {
      const body = receiver.bodies('/v1/metrics');
      return body.includes('"durable_tools.tool.calls"') && body;
    });
    expect(metrics).toContain('"durable-tools"');
  });

  test("serves Temporal's runtime metrics for Prometheus at --prometheus", async () => {
    const text = await waitFor('the Prometheus endpoint', async () => {
      const response = await fetch(`http://127.0.0.1:${prometheusPort}/metrics`);
      const body = await response.text();
      return response.ok && /temporal_/.test(body) && body;
    });
    expect(text).toMatch(/temporal_worker_task_slots_available|temporal_activity_execution_latency/);
  });
});
