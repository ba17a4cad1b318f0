import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Connection } from '@temporalio/client';
import {
  ensurePrivateDirectory,
  PRIVATE_MODES,
  tighten,
  tightenCompanions,
  withPrivateUmask,
} from '../stores/private-state';
import { SEARCH_ATTRIBUTE_FLAGS } from '../contract/search-attributes';
import { findFreePort } from './free-port';
import { resolveTemporalCli, type ResolveTemporalCliOptions } from './temporal-cli';
import { TemporalCliError } from './temporal-cli-error';
import { TUNED_DEV_SERVER_CONFIG, TUNED_DEV_SERVER_SQLITE_PRAGMAS } from './tuned-dev-server-config';

export { TUNED_DEV_SERVER_CONFIG, TUNED_DEV_SERVER_SQLITE_PRAGMAS } from './tuned-dev-server-config';

/** How long the dev server may take to answer, and how often we ask. */
export const DEV_SERVER_TIMING = {
  readyTimeoutMs: 90_000,
  pollIntervalMs: 250,
  stopTimeoutMs: 10_000,
} as const;

/** Options of {@link startDevServer}. */
export interface DevServerOptions {
  /**
   * SQLite file that keeps histories across restarts; in memory when omitted. Created 0600 (and its -wal /
   * -shm files) in a directory created 0700; an existing one is tightened (docs/at-rest.md).
   */
  dbFile?: string;
  /** gRPC port (default: a free port). */
  port?: number;
  /** Web UI port (default: a free port); ignored when `ui` is false. */
  uiPort?: number;
  /** Start the web UI (default true). */
  ui?: boolean;
  /**
   * URL of a codec server the web UI sends payloads to for decoding (`--ui-codec-endpoint`), e.g. the one
   * `durable-tools codec-server` starts: the UI then shows encrypted runs in clear.
   */
  uiCodecEndpoint?: string;
  namespace?: string;
  /** File that receives the server's own log (default: discarded); 0600, in a directory created 0700. */
  logFile?: string;
  /** Options for finding or building the CLI. */
  cli?: ResolveTemporalCliOptions;
  /**
   * Server dynamic config (`--dynamic-config-value KEY=VALUE`, the value as JSON), e.g.
   * `{ 'limit.historyCount.suggestContinueAsNew': 100_000 }`.
   */
  dynamicConfig?: Readonly<Record<string, string | number | boolean>>;
  /**
   * Start with {@link TUNED_DEV_SERVER_CONFIG}, which removes the server's artificial waits (default true).
   * `false` starts the CLI's defaults (plus `dynamicConfig`), e.g. to compare against them.
   */
  tuned?: boolean;
  /**
   * SQLite pragmas of the state file (`--sqlite-pragma`), used with `dbFile` only. Default
   * {@link TUNED_DEV_SERVER_SQLITE_PRAGMAS} when tuned, none otherwise.
   */
  sqlitePragmas?: Readonly<Record<string, string>>;
  /**
   * Run the server in its own process group (default false), so a Ctrl-C in the terminal reaches only the
   * caller, which then stops the server itself after what depends on it (the command line does this).
   */
  ownProcessGroup?: boolean;
}

/** A running dev server. */
export interface DevServer {
  /** `host:port` for `TEMPORAL_ADDRESS`. */
  address: string;
  namespace: string;
  /** URL of the web UI, when started. */
  uiUrl?: string;
  /** Process id of the server. */
  pid: number;
  /** Stops the server (SIGTERM, then SIGKILL after a grace period). */
  stop(): Promise<void>;
}

/**
 * Starts `temporal server start-dev` with the engine's search attributes registered and waits until it
 * answers. The CLI is found or built with {@link resolveTemporalCli}.
 *
 * @example
 * ```ts
 * const server = await startDevServer({ dbFile: '.data/temporal.sqlite', port: 7233, uiPort: 8233 });
 * console.log(server.address, server.uiUrl); // 127.0.0.1:7233 http://127.0.0.1:8233
 * await server.stop();
 * ```
 */
export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  const cli = await resolveTemporalCli(options.cli);
  const namespace = options.namespace ?? 'default';
  const ui = options.ui ?? true;
  const port = options.port ?? (await findFreePort());
  const uiPort = ui ? (options.uiPort ?? (await findFreePort())) : undefined;
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--namespace',
    namespace,
    '--log-level',
    'warn',
  ];
  if (ui && uiPort !== undefined) args.push('--ui-ip', '127.0.0.1', '--ui-port', String(uiPort));
  if (ui && options.uiCodecEndpoint) args.push('--ui-codec-endpoint', options.uiCodecEndpoint);
  if (!ui) args.push('--headless');
  if (options.dbFile) {
    ensurePrivateDirectory(dirname(options.dbFile));
    // State of an earlier server (or an earlier version) is tightened; a new file is made under umask 077.
    tighten(options.dbFile, PRIVATE_MODES.file);
    tightenCompanions(options.dbFile);
    args.push('--db-filename', options.dbFile);
    const pragmas = options.sqlitePragmas ?? (options.tuned === false ? {} : TUNED_DEV_SERVER_SQLITE_PRAGMAS);
    for (const [pragma, value] of Object.entries(pragmas)) args.push('--sqlite-pragma', `${pragma}=${value}`);
  }
  for (const flag of SEARCH_ATTRIBUTE_FLAGS) args.push('--search-attribute', flag);
  for (const [key, value] of Object.entries({
    ...(options.tuned === false ? {} : TUNED_DEV_SERVER_CONFIG),
    ...options.dynamicConfig,
  })) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }

  let logFd: number | 'ignore' = 'ignore';
  if (options.logFile) {
    ensurePrivateDirectory(dirname(options.logFile));
    logFd = openSync(options.logFile, 'a', PRIVATE_MODES.file);
    tighten(options.logFile, PRIVATE_MODES.file);
  }
  // The server creates its SQLite files (and their -wal / -shm) under umask 077: 0600, like the engine's stores.
  const child = withPrivateUmask(() =>
    spawn(cli.path, args, { stdio: ['ignore', logFd, logFd], detached: options.ownProcessGroup ?? false }),
  );
  if (typeof logFd === 'number') closeSync(logFd);
  const address = `127.0.0.1:${port}`;
  try {
    await waitUntilReady(child, address, namespace, options.logFile);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  if (options.dbFile) {
    // Where the mask could not be set (a worker thread), the files the server just created are tightened now.
    tighten(options.dbFile, PRIVATE_MODES.file);
    tightenCompanions(options.dbFile);
  }
  return {
    address,
    namespace,
    ...(uiPort !== undefined ? { uiUrl: `http://127.0.0.1:${uiPort}` } : {}),
    pid: child.pid ?? -1,
    stop: () => stopProcess(child),
  };
}

async function waitUntilReady(child: ChildProcess, address: string, namespace: string, logFile?: string) {
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));
  const deadline = Date.now() + DEV_SERVER_TIMING.readyTimeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (exited !== undefined) {
      throw new TemporalCliError(
        `The Temporal dev server exited with code ${exited} before it was ready.${logTail(logFile)}`,
        'SERVER_FAILED',
      );
    }
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } finally {
        await connection.close();
      }
    } catch (error) {
      lastError = error;
    }
    await new Promise((r) => setTimeout(r, DEV_SERVER_TIMING.pollIntervalMs));
  }
  throw new TemporalCliError(
    `The Temporal dev server at ${address} did not become ready within ${DEV_SERVER_TIMING.readyTimeoutMs / 1000} s ` +
      `(last error: ${(lastError as Error | undefined)?.message ?? 'none'}).${logTail(logFile)}`,
    'SERVER_FAILED',
  );
}

function logTail(logFile?: string): string {
  if (!logFile) return '';
  try {
    const lines = readFileSync(logFile, 'utf8').trim().split('\n').slice(-10);
    return `\nLast lines of ${logFile}:\n${lines.join('\n')}`;
  } catch {
    return '';
  }
}

function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), DEV_SERVER_TIMING.stopTimeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
