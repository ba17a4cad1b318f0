/**
 * Issue 50: metrics that cannot vanish. A worker serves two Prometheus endpoints at most: Temporal's runtime
 * metrics (`--prometheus`) and the engine's through OpenTelemetry's exporter (`OTEL_METRICS_EXPORTER=prometheus`,
 * port `OTEL_EXPORTER_PROMETHEUS_PORT`, default 9464). Either one that cannot bind its port stops the worker at
 * start, exit 1, naming the port (TelemetryConfigError PORT_IN_USE) — before, the OpenTelemetry one ran without
 * its endpoint and said so only at OTEL_LOG_LEVEL=error. On distinct ports, both serve.
 */
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from '../../src/dev-server/free-port';
import { runCliToEnd, startCli } from '../support/cli-process';
import { orderABook, stopCli, testServerCliEnv, testServerClient, waitForWorkerStart } from '../support/cli-worker';
import { uniqueTaskQueue } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

const dir = mkdtempSync(join(tmpdir(), 'durable-tools-metrics-ports-'));

function env(extra: NodeJS.ProcessEnv, taskQueue = uniqueTaskQueue('metrics-ports')): NodeJS.ProcessEnv {
  return {
    ...testServerCliEnv(dir, taskQueue),
    DURABLE_TOOLS_AUDIT_STORE: 'memory',
    DURABLE_TOOLS_STREAM_STORE: 'off',
    ...extra,
  };
}

function listen(port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

describe('a worker whose metrics endpoints cannot start', () => {
  test("stops at start, naming the port, when --prometheus and OpenTelemetry's exporter share it", async () => {
    const port = await findFreePort();
    const worker = await runCliToEnd(
      ['worker', '--tools', 'test/support/cli-tools.ts', '--prometheus', `127.0.0.1:${port}`],
      env({ OTEL_METRICS_EXPORTER: 'prometheus', OTEL_EXPORTER_PROMETHEUS_PORT: String(port) }),
    );
    expect(worker.code).toBe(1);
    expect(worker.stderr).toContain(`cannot listen on 0.0.0.0:${port}: the port is in use`);
    expect(worker.stderr).toContain('OTEL_EXPORTER_PROMETHEUS_PORT');
    expect(worker.stdout).not.toMatch(/durable-tools worker: \d+ tools/);
  });

  test("stops at start, naming the address, when --prometheus's port is taken", async () => {
    const port = await findFreePort();
    const taken = await listen(port, '127.0.0.1');
    try {
      const worker = await runCliToEnd(
        ['worker', '--tools', 'test/support/cli-tools.ts', '--prometheus', `127.0.0.1:${port}`],
        env({}),
      );
      expect(worker.code).toBe(1);
      expect(worker.stderr).toContain(`--prometheus 127.0.0.1:${port}`);
      expect(worker.stderr).toMatch(/Address already in use/);
    } finally {
      taken.close();
    }
  });

  test("stops at start when OpenTelemetry's exporter port is taken by another process", async () => {
    const port = await findFreePort();
    const taken = await listen(port, '127.0.0.1');
    try {
      const worker = await runCliToEnd(
        ['worker', '--tools', 'test/support/cli-tools.ts'],
        env({
          OTEL_METRICS_EXPORTER: 'prometheus',
          OTEL_EXPORTER_PROMETHEUS_HOST: '127.0.0.1',
          OTEL_EXPORTER_PROMETHEUS_PORT: String(port),
        }),
      );
      expect(worker.code).toBe(1);
      expect(worker.stderr).toContain(`cannot listen on 127.0.0.1:${port}: the port is in use`);
    } finally {
      taken.close();
    }
  });
});

describe('a worker with the two endpoints on distinct ports', () => {
  test("serves Temporal's metrics on one and the engine's on the other", async () => {
    const temporalPort = await findFreePort();
    const otelPort = await findFreePort();
    const taskQueue = uniqueTaskQueue('metrics-ports-both');
    const worker = startCli(
      ['worker', '--tools', 'test/support/cli-tools.ts', '--prometheus', `127.0.0.1:${temporalPort}`],
      env(
        {
          OTEL_METRICS_EXPORTER: 'prometheus',
          OTEL_EXPORTER_PROMETHEUS_HOST: '127.0.0.1',
          OTEL_EXPORTER_PROMETHEUS_PORT: String(otelPort),
        },
        taskQueue,
      ),
    );
    const client = await testServerClient();
    try {
      await waitForWorkerStart(worker);
      await orderABook(client, taskQueue);
      const scrape = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      const engine = await waitFor('the engine metrics on the OpenTelemetry port', async () => {
        const text = await scrape(otelPort);
        return /^durable_tools_tool_calls/m.test(text) && text;
      });
      expect(engine).not.toMatch(/^temporal_/m);
      const runtime = await waitFor("Temporal's metrics on --prometheus", async () => {
        const text = await scrape(temporalPort);
        return /^temporal_/m.test(text) && text;
      });
      expect(runtime).not.toMatch(/^durable_tools_/m);
    } finally {
      await stopCli(worker);
      await client.connection.close();
    }
  });
});
