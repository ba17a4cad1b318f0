/**
 * Issue 15: a worker process (`durable-tools worker`) exports traces and metrics where the standard OTEL_*
 * variables say — here OTLP over HTTP/JSON to a receiver on 127.0.0.1 — and serves Temporal's runtime metrics
 * for Prometheus with `--prometheus`.
 */
import type { Client } from '@temporalio/client';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from '../../src/dev-server/free-port';
import { startCli, type CliProcess } from '../support/cli-process';
import {
  fastOtlpEnv,
  orderABook,
  stopCli,
  testServerCliEnv,
  testServerClient,
  waitForWorkerStart,
} from '../support/cli-worker';
import { otlpReceiver, type OtlpReceiver } from '../support/otlp-receiver';
import { uniqueTaskQueue } from '../support/temporal-test-env';
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
    ...testServerCliEnv(dir, taskQueue),
    ...fastOtlpEnv(receiver.url),
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  });
  await waitForWorkerStart(worker);
  client = await testServerClient();
  await orderABook(client, taskQueue);
});

afterAll(async () => {
  await stopCli(worker);
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
