import { Client, Connection } from '@temporalio/client';
import type { LogLevel, LogMetadata, Logger } from '@temporalio/common';
import { DefaultLogger, makeTelemetryFilterString, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelProvider } from '../../src/contract/model-types';
import type { Tool } from '../../src/tools/define-tool';
import { createWorker, type CreateWorkerOptions } from '../../src/runtime/create-worker';
import type { IdempotencyStore } from '../../src/stores/idempotency/idempotency-store';
import type { TranscriptStore } from '../../src/stores/transcripts/transcript-store';

let runtimeInstalled = false;

/** Settings of the dev server the global setup started. */
export function testServer(): { address: string; namespace: string; bundlePath: string } {
  const address = process.env.DT_TEST_TEMPORAL_ADDRESS;
  const bundlePath = process.env.DT_TEST_WORKFLOW_BUNDLE;
  if (!address || !bundlePath) throw new Error('The integration global setup did not run (no dev server address).');
  return { address, namespace: process.env.DT_TEST_NAMESPACE ?? 'default', bundlePath };
}

/** A task queue no other test uses. */
export function uniqueTaskQueue(name: string): string {
  return `test-${name}-${randomUUID().slice(0, 8)}`;
}

/** Connections of one test file to the dev server. */
export interface TestTemporal {
  client: Client;
  nativeConnection: NativeConnection;
  close(): Promise<void>;
}

/** A Temporal logger handing every line, at every level, to `write` (for a file that reads the runtime's logs). */
export function loggerWriting(write: (level: LogLevel, message: string, meta?: LogMetadata) => void): Logger {
  const at = (level: LogLevel) => (message: string, meta?: LogMetadata) => write(level, message, meta);
  return {
    log: (level, message, meta) => write(level, message, meta),
    trace: at('TRACE'),
    debug: at('DEBUG'),
    info: at('INFO'),
    warn: at('WARN'),
    error: at('ERROR'),
  };
}

/**
 * Connects a client and a worker connection to the test dev server. The first call installs the process's Temporal
 * runtime: with `logger`, every line reaches it (core's at DEBUG too), for the files that read the worker's logs.
 */
export async function connectTestTemporal(logger?: Logger): Promise<TestTemporal> {
  if (logger) {
    Runtime.install({
      logger,
      telemetryOptions: { logging: { forward: {}, filter: makeTelemetryFilterString({ core: 'DEBUG' }) } },
    });
    runtimeInstalled = true;
  } else if (!runtimeInstalled) {
    // Worker logs go to a file next to the dev server's log, not into the test output.
    const logFile = join(process.env.DT_TEST_DIR ?? tmpdir(), 'worker.log');
    Runtime.install({
      logger: new DefaultLogger('WARN', (entry) =>
        appendFileSync(logFile, `${entry.level} ${entry.message} ${safeJson(entry.meta)}\n`),
      ),
    });
    runtimeInstalled = true;
  }
  const { address, namespace } = testServer();
  const connection = await Connection.connect({ address });
  const nativeConnection = await NativeConnection.connect({ address });
  return {
    client: new Client({ connection, namespace }),
    nativeConnection,
    close: async () => {
      await connection.close();
      await nativeConnection.close();
    },
  };
}

/** What {@link useTestTemporal} runs for the whole test file besides the connections. */
export interface TestTemporalOptions {
  /**
   * Creates a worker that runs from before the file's first test until after its last one (it is shut down,
   * and its run awaited, before the connections close).
   */
  worker?: (temporal: TestTemporal) => Promise<Worker>;
  /** The logger of the process's Temporal runtime, installed before connecting (see {@link connectTestTemporal}). */
  logger?: Logger;
}

/**
 * Connects to the test dev server before the file's tests and closes the connections after them
 * (jest `beforeAll`/`afterAll` hooks, registered where it is called), with the file's worker if one is given.
 * The returned connections can be used from the first test or `beforeAll` hook declared after the call on.
 */
export function useTestTemporal(options: TestTemporalOptions = {}): TestTemporal {
  let connected: TestTemporal | undefined;
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  const current = (): TestTemporal => {
    if (!connected) throw new Error('The test dev server is connected only once the beforeAll hooks run.');
    return connected;
  };
  const temporal: TestTemporal = {
    get client() {
      return current().client;
    },
    get nativeConnection() {
      return current().nativeConnection;
    },
    close: () => current().close(),
  };
  beforeAll(async () => {
    connected = await connectTestTemporal(options.logger);
    if (options.worker) {
      worker = await options.worker(temporal);
      running = worker.run();
    }
  });
  afterAll(async () => {
    worker?.shutdown();
    await running;
    await connected?.close();
  });
  return temporal;
}

/**
 * Creates a worker for the given tools on a task queue, using the pre-built workflow bundle.
 * `random` replaces `Math.random` for retry jitter (pass a seeded one to predict the delays).
 */
export async function createTestWorker(
  temporal: TestTemporal,
  options: {
    tools: readonly Tool[];
    taskQueue: string;
    modelProviders?: Record<string, ModelProvider>;
    random?: () => number;
    /** MCP servers (or a host) whose tools the worker also runs. */
    mcp?: CreateWorkerOptions['mcp'];
    workerOptions?: CreateWorkerOptions['workerOptions'];
    idempotencyStore?: IdempotencyStore;
    transcripts?: TranscriptStore;
    approvals?: CreateWorkerOptions['approvals'];
    auditStore?: CreateWorkerOptions['auditStore'];
    authority?: CreateWorkerOptions['authority'];
    streams?: CreateWorkerOptions['streams'];
    workflowStackTraces?: boolean;
  },
): Promise<Worker> {
  const { namespace, bundlePath } = testServer();
  const { worker } = await createWorker({
    // Stores not given here stay in memory (durable ones are the default); the worker's warning about tools with
    // effects on memory stores is for production workers, not this harness.
    stores: 'memory',
    warn: () => {},
    tools: options.tools,
    connection: temporal.nativeConnection,
    settings: { namespace, taskQueue: options.taskQueue },
    workflowBundle: { codePath: bundlePath },
    ...(options.modelProviders ? { modelProviders: options.modelProviders } : {}),
    ...(options.random ? { random: options.random } : {}),
    ...(options.mcp ? { mcp: options.mcp } : {}),
    ...(options.workerOptions ? { workerOptions: options.workerOptions } : {}),
    ...(options.idempotencyStore ? { idempotencyStore: options.idempotencyStore } : {}),
    ...(options.transcripts ? { transcripts: options.transcripts } : {}),
    ...(options.approvals ? { approvals: options.approvals } : {}),
    ...(options.auditStore ? { auditStore: options.auditStore } : {}),
    ...(options.authority ? { authority: options.authority } : {}),
    ...(options.streams ? { streams: options.streams } : {}),
    ...(options.workflowStackTraces !== undefined ? { workflowStackTraces: options.workflowStackTraces } : {}),
  });
  return worker;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return String(value);
  }
}
