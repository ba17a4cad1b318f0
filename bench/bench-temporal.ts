import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { connectionSettingsFromEnv } from '../src/connection-settings';
import { startDevServer } from '../src/dev-server/dev-server';

/** A Temporal server for a benchmark: TEMPORAL_ADDRESS if set, else a fresh headless in-memory dev server. */
export async function benchTemporal(): Promise<{
  client: Client;
  nativeConnection: NativeConnection;
  namespace: string;
  close(): Promise<void>;
}> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const settings = connectionSettingsFromEnv();
  const server = settings.addressFromEnv ? undefined : await startDevServer({ ui: false });
  const address = server?.address ?? settings.address;
  const namespace = server?.namespace ?? settings.namespace;
  const connection = await Connection.connect({ address });
  const nativeConnection = await NativeConnection.connect({ address });
  return {
    client: new Client({ connection, namespace }),
    nativeConnection,
    namespace,
    close: async () => {
      await connection.close();
      await nativeConnection.close();
      await server?.stop();
    },
  };
}
