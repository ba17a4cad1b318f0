/**
 * The set-up of the tests that run `durable-tools worker` as a process against the test server and read its
 * telemetry: its environment, waiting for it to serve, a client, one short run, and stopping it.
 */
import { Client, Connection } from '@temporalio/client';
import { join } from 'node:path';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import type { CliProcess } from './cli-process';
import { testServer } from './temporal-test-env';
import { waitFor } from './wait-for';

/**
 * The environment of a command against the test server on `taskQueue`: no `temporal.toml`, keys in a SQLite file
 * of `dir`, transcripts in memory.
 */
export function testServerCliEnv(dir: string, taskQueue: string): NodeJS.ProcessEnv {
  return {
    TEMPORAL_ADDRESS: testServer().address,
    TEMPORAL_NAMESPACE: testServer().namespace,
    TEMPORAL_CONFIG_FILE: join(dir, 'no-temporal.toml'),
    DURABLE_TOOLS_TASK_QUEUE: taskQueue,
    DURABLE_TOOLS_SQLITE_PATH: join(dir, 'keys.sqlite'),
    DURABLE_TOOLS_TRANSCRIPT_STORE: 'memory',
  };
}

/** Traces and metrics over OTLP to `endpoint`, exported soon (spans after 200 ms, metrics every 500 ms). */
export function fastOtlpEnv(endpoint: string): NodeJS.ProcessEnv {
  return {
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_METRICS_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_BSP_SCHEDULE_DELAY: '200',
    OTEL_METRIC_EXPORT_INTERVAL: '500',
    OTEL_METRIC_EXPORT_TIMEOUT: '400',
  };
}

/** Waits until the worker says it serves its tools; fails with its output when it exits first. */
export async function waitForWorkerStart(worker: CliProcess): Promise<void> {
  await waitFor('the worker to start', () => {
    if (worker.child.exitCode !== null) throw new Error(`worker exited:\n${worker.stdout()}\n${worker.stderr()}`);
    return /durable-tools worker: \d+ tools/.test(worker.stdout());
  });
}

/** Stops a command started by `startCli` (SIGTERM to its process group), if it still runs, and waits for its exit. */
export async function stopCli(cli: CliProcess | undefined): Promise<void> {
  if (cli?.child.exitCode !== null) return;
  process.kill(-cli.child.pid!, 'SIGTERM');
  await cli.exited;
}

/** A client of the test server on a connection of its own (close it with `client.connection.close()`). */
export async function testServerClient(): Promise<Client> {
  return new Client({
    connection: await Connection.connect({ address: testServer().address }),
    namespace: testServer().namespace,
  });
}

/** Runs "Order a book" (one `create_order` of test/support/cli-tools.ts, then "Done.") on `taskQueue` to its end. */
export async function orderABook(client: Client, taskQueue: string): Promise<void> {
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
}
