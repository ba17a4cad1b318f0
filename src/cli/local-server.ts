import { isAbsolute, resolve } from 'node:path';
import { answersAsTemporal } from '../dev-server/answers-as-temporal';
import { startDevServer, type DevServer } from '../dev-server/dev-server';
import { isPortOpen } from '../dev-server/free-port';
import { LOCAL_TEMPORAL } from '../dev-server/local-temporal';
import type { LocalServerOptions } from './server-args';
import type { CliContext } from './command';
import { DurableToolsError } from '../contract/durable-tools-error';

/** A server port already taken: the command refuses instead of silently using whatever listens there. */
export class PortTakenError extends DurableToolsError<'PORT_TAKEN'> {
  override readonly name = 'PortTakenError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'PORT_TAKEN', options);
  }
}

/**
 * Starts a local Temporal dev server (own process group, so Ctrl-C reaches only this command, which stops the
 * server last), registered with the lifecycle. Refuses a taken port with the commands to use what answers there
 * or to pick another port: it never reuses a server without saying so.
 */
export async function startLocalServer(options: LocalServerOptions, context: CliContext): Promise<DevServer> {
  for (const [flag, port] of [
    ['--port', options.port],
    ['--ui-port', options.uiPort],
  ] as const) {
    if (port !== 0 && (await isPortOpen(port))) {
      const temporal = flag === '--port' && (await answersAsTemporal(`127.0.0.1:${port}`, options.namespace));
      throw new PortTakenError(
        `Port ${port} (${flag}) is already in use${temporal ? ' by a Temporal server that this command did not start' : ''}. ` +
          (temporal
            ? `To use that server, run with TEMPORAL_ADDRESS=127.0.0.1:${port}; to start another one, pass ${flag} 0 (a free port) or another port.`
            : `Pass ${flag} 0 (a free port) or another port.`),
      );
    }
  }
  const dbFile = options.db === 'memory' ? undefined : absolute(options.db, context.cwd);
  context.err(
    `Starting a local Temporal dev server (${dbFile ? `state in ${dbFile}` : 'in memory'}; log in ${LOCAL_TEMPORAL.dataDir}/${LOCAL_TEMPORAL.logFile})...`,
  );
  const server = await startDevServer({
    ...(options.port !== 0 ? { port: options.port } : {}),
    ...(options.uiPort !== 0 ? { uiPort: options.uiPort } : {}),
    ...(dbFile ? { dbFile } : {}),
    logFile: absolute(`${LOCAL_TEMPORAL.dataDir}/${LOCAL_TEMPORAL.logFile}`, context.cwd),
    namespace: options.namespace,
    ...(options.uiCodecEndpoint ? { uiCodecEndpoint: options.uiCodecEndpoint } : {}),
    ownProcessGroup: true,
  });
  context.lifecycle.killOnExit(server.pid);
  context.lifecycle.defer(`the Temporal server (pid ${server.pid})`, async () => {
    context.err(`Stopping the Temporal server (pid ${server.pid})...`);
    await server.stop();
  });
  return server;
}

function absolute(path: string, cwd: string): string {
  return isAbsolute(path) ? path : resolve(cwd, path);
}
