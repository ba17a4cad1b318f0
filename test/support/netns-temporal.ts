import { join } from 'node:path';
import { Client } from 'pg';
import { startDevServer } from '../../src/dev-server/dev-server';
import type { NetnsNetwork } from './netns-network';
import { startTcpRelay } from './netns-relay';
import { startTemporalCluster } from './temporal-cluster';

/** How the Temporal server of a netns run is started. */
export const NETNS_TEMPORAL_SETTINGS = {
  /**
   * Prefix of the database of the cluster's own state, one per run (`<prefix>_<network id>`, visibility in
   * `<database>_visibility`), dropped after the run: the cluster metadata records the frontend's address, which is
   * new in every run, and four services updating it at once on an existing database race ("SaveClusterMetadata
   * encountered version mismatch").
   */
  databasePrefix: 'temporal_netns',
  /**
   * First port of the cluster's services, on the network's own Temporal address (so always free). Below 32768: the
   * server keeps membership ports in a `smallint` column (`cluster_membership.rpc_port`), so a free port picked from
   * the ephemeral range (32768 and up) stops the history service at start.
   */
  basePort: 23_400,
} as const;

/** A Temporal server that the worker hosts of a network reach. */
export interface NetnsTemporal {
  /** `host:port` of the frontend as the hosts reach it (on the network's Temporal address). */
  hostAddress: string;
  /** `host:port` for clients in the root namespace. */
  clientAddress: string;
  namespace: string;
  /** `cluster` (the server's services on PostgreSQL) or `dev` (the CLI's dev server, behind a relay). */
  kind: 'cluster' | 'dev';
  /** Restarts one service; only on a cluster. */
  restartService?: (name: 'history') => Promise<void>;
  /** Stops the server (and drops the cluster's databases). */
  stop(): Promise<void>;
}

/**
 * Starts the Temporal server of a netns run: a cluster (test/support/temporal-cluster.ts) bound to the network's
 * Temporal address on a database of its own, or the dev server, which listens on 127.0.0.1 only, behind a relay on
 * that address.
 */
export async function startNetnsTemporal(
  network: NetnsNetwork,
  kind: 'cluster' | 'dev',
  workDir: string,
  log: (line: string) => void,
): Promise<NetnsTemporal> {
  if (kind === 'cluster') {
    const database = `${NETNS_TEMPORAL_SETTINGS.databasePrefix}_${network.id}`;
    const drop = () => dropDatabases([database, `${database}_visibility`]);
    const cluster = await startTemporalCluster({
      bindAddress: network.temporalHost,
      database,
      basePort: NETNS_TEMPORAL_SETTINGS.basePort,
      dataDir: join(workDir, 'temporal-cluster'),
      log,
    }).catch(async (error: unknown) => {
      await drop().catch(() => undefined);
      throw error;
    });
    return {
      kind,
      hostAddress: cluster.address,
      clientAddress: cluster.address,
      namespace: cluster.namespace,
      restartService: (name) => cluster.restartService(name),
      stop: async () => {
        await cluster.stop();
        await drop();
      },
    };
  }
  const server = await startDevServer({ ui: false, logFile: join(workDir, 'temporal-server.log') });
  const port = Number(server.address.split(':')[1]);
  const relay = await startTcpRelay({ host: network.temporalHost, port: 0 }, { host: '127.0.0.1', port });
  return {
    kind,
    hostAddress: relay.address,
    clientAddress: server.address,
    namespace: server.namespace,
    stop: async () => {
      await relay.close();
      await server.stop();
    },
  };
}

async function dropDatabases(names: readonly string[]): Promise<void> {
  const admin = new Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database: 'postgres' });
  await admin.connect();
  try {
    for (const name of names) await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
