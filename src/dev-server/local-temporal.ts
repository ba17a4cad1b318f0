import { join } from 'node:path';
import { answersAsTemporal } from './answers-as-temporal';
import type { ConnectionSettings } from '../client/connection-settings';
import { startDevServer } from './dev-server';
import { isPortOpen } from './free-port';

/** Where local state lives and which ports the local server prefers. */
export const LOCAL_TEMPORAL = {
  dataDir: '.data',
  dbFile: 'temporal.sqlite',
  logFile: 'temporal-server.log',
  port: 7233,
  uiPort: 8233,
} as const;

/** A Temporal server to talk to, and how it was obtained. */
export interface LocalTemporal {
  address: string;
  namespace: string;
  /** Web UI, when known. */
  uiUrl?: string;
  /** `env` (TEMPORAL_ADDRESS), `reused` (a server already on 7233) or `started` (we started it). */
  origin: 'env' | 'reused' | 'started';
  /** Stops the server if we started it; otherwise does nothing. */
  stop(): Promise<void>;
}

/**
 * Gives a Temporal server for local work: the one in TEMPORAL_ADDRESS if set; else a server already
 * answering on 127.0.0.1:7233; else a dev server started here with its UI, keeping state in
 * `.data/temporal.sqlite` so histories survive a restart, in its own process group (Ctrl-C reaches only the
 * caller, which calls `stop` after its worker) and killed if the caller exits without calling `stop`.
 */
export async function ensureLocalTemporal(
  settings: ConnectionSettings,
  options: { dataDir?: string; log?: (line: string) => void } = {},
): Promise<LocalTemporal> {
  const log = options.log ?? ((line: string) => console.log(line));
  const noop = async () => {};
  if (settings.addressFromEnv) {
    return {
      address: settings.address,
      namespace: settings.namespace,
      ...(process.env.TEMPORAL_UI_URL ? { uiUrl: process.env.TEMPORAL_UI_URL } : {}),
      origin: 'env',
      stop: noop,
    };
  }
  const preferred = `127.0.0.1:${LOCAL_TEMPORAL.port}`;
  if ((await isPortOpen(LOCAL_TEMPORAL.port)) && (await answersAsTemporal(preferred, settings.namespace))) {
    log(`Using the Temporal server already running at ${preferred}.`);
    return {
      address: preferred,
      namespace: settings.namespace,
      uiUrl: `http://127.0.0.1:${LOCAL_TEMPORAL.uiPort}`,
      origin: 'reused',
      stop: noop,
    };
  }
  const dataDir = options.dataDir ?? LOCAL_TEMPORAL.dataDir;
  const portsFree = !(await isPortOpen(LOCAL_TEMPORAL.port)) && !(await isPortOpen(LOCAL_TEMPORAL.uiPort));
  log(`Starting a local Temporal dev server (state in ${join(dataDir, LOCAL_TEMPORAL.dbFile)})...`);
  const server = await startDevServer({
    dbFile: join(dataDir, LOCAL_TEMPORAL.dbFile),
    logFile: join(dataDir, LOCAL_TEMPORAL.logFile),
    namespace: settings.namespace,
    ...(portsFree ? { port: LOCAL_TEMPORAL.port, uiPort: LOCAL_TEMPORAL.uiPort } : {}),
    // Ctrl-C reaches only the caller, which stops the server after its worker (in `stop`).
    ownProcessGroup: true,
  });
  // A last resort when the caller exits without calling `stop` (an uncaught error): no server left behind.
  const killOnExit = () => {
    try {
      process.kill(server.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  process.once('exit', killOnExit);
  return {
    address: server.address,
    namespace: server.namespace,
    ...(server.uiUrl ? { uiUrl: server.uiUrl } : {}),
    origin: 'started',
    stop: async () => {
      await server.stop();
      process.off('exit', killOnExit);
    },
  };
}
