import { Client, Connection, type DataConverter } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { chromium, type Browser } from 'playwright-core';
import { startDevServer, type DevServer, type DevServerOptions } from '../../src/dev-server/dev-server';
import { createWorker, type CreateWorkerOptions } from '../../src/runtime/create-worker';
import { testServer } from './temporal-test-env';

/** A dev server of its own with its web UI, for a browser test, and the connections to it. */
export interface UiDevServer {
  server: DevServer;
  connection: Connection;
  nativeConnection: NativeConnection;
  client: Client;
  /** Creates a worker on `taskQueue` of this server, with the test workflow bundle and `options` (tools, ...). */
  createWorker(
    taskQueue: string,
    options: Omit<CreateWorkerOptions, 'connection' | 'settings' | 'workflowBundle'>,
  ): Promise<Worker>;
  /** Closes the connections (the server keeps running: `server.stop()` ends it). */
  closeConnections(): Promise<void>;
}

/**
 * Starts a dev server with its web UI (and `options`), after installing a runtime that logs warnings, and
 * connects to it; `dataConverter` is the client's (an encrypting one, say).
 */
export async function startUiDevServer(
  options: DevServerOptions = {},
  dataConverter?: DataConverter,
): Promise<UiDevServer> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const server = await startDevServer({ ui: true, ...options });
  const connection = await Connection.connect({ address: server.address });
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const client = new Client({ connection, namespace: server.namespace, ...(dataConverter ? { dataConverter } : {}) });
  return {
    server,
    connection,
    nativeConnection,
    client,
    createWorker: async (taskQueue, workerOptions) => {
      const { worker } = await createWorker({
        // Stores not given here stay in memory (durable ones are the default).
        stores: 'memory',
        ...workerOptions,
        connection: nativeConnection,
        settings: { namespace: server.namespace, taskQueue },
        workflowBundle: { codePath: testServer().bundlePath },
      });
      return worker;
    },
    closeConnections: async () => {
      await connection.close();
      await nativeConnection.close();
    },
  };
}

/** The address of the page of run `workflowId` in the server's web UI. */
export function runPageUrl(server: DevServer, workflowId: string): string {
  return `${server.uiUrl}/namespaces/${server.namespace}/workflows/${workflowId}`;
}

/** Launches headless Chromium at `chromiumPath` as the browser tests run it (no sandbox, no GPU). */
export function launchChromium(chromiumPath: string): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-gpu'] });
}

/** What the tests of a browser block look at: the dev server and the browser. */
export interface UiTestBed {
  readonly server: DevServer;
  readonly browser: Browser;
}

/**
 * Registers the hooks of a block of browser tests: before them, `start()` starts the dev server (see
 * {@link startUiDevServer}), `setUp` makes what the tests look at, the connections close and Chromium at
 * `chromiumPath` is launched; after them, the browser closes and the server stops.
 */
export function useUiTestBed(
  chromiumPath: string,
  start: () => Promise<UiDevServer>,
  setUp: (ui: UiDevServer) => Promise<void>,
): UiTestBed {
  let server: DevServer | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    const ui = await start();
    server = ui.server;
    try {
      await setUp(ui);
    } finally {
      await ui.closeConnections();
    }
    browser = await launchChromium(chromiumPath);
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });
  return {
    get server() {
      if (!server) throw new Error('The dev server starts in the beforeAll hook.');
      return server;
    },
    get browser() {
      if (!browser) throw new Error('The browser is launched in the beforeAll hook.');
      return browser;
    },
  };
}
