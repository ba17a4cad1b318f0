import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { connectionSettingsFromEnv } from '../src/client/connection-settings';
import { startDevServer, type DevServerOptions } from '../src/dev-server/dev-server';

/**
 * A Temporal server for a benchmark: TEMPORAL_ADDRESS if set, else a fresh headless in-memory dev server
 * (started with `devServer`, e.g. its dynamic config; ignored when TEMPORAL_ADDRESS is set).
 */
export async function benchTemporal(devServer: DevServerOptions = {}): Promise<{
  client: Client;
  nativeConnection: NativeConnection;
  /** `host:port` of the server. */
  address: string;
  namespace: string;
  /** Whether this function started the server (so `devServer` options apply). */
  startedServer: boolean;
  close(): Promise<void>;
}> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const settings = connectionSettingsFromEnv();
  const server = settings.addressFromEnv ? undefined : await startDevServer({ ...devServer, ui: false });
  const address = server?.address ?? settings.address;
  const namespace = server?.namespace ?? settings.namespace;
  const connection = await Connection.connect({ address });
  const nativeConnection = await NativeConnection.connect({ address });
  return {
    client: new Client({ connection, namespace }),
    nativeConnection,
    address,
    namespace,
    startedServer: server !== undefined,
    close: async () => {
      await connection.close();
      await nativeConnection.close();
      await server?.stop();
    },
  };
}
