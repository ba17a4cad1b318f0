import { TUNED_DEV_SERVER_CONFIG } from './tuned-dev-server-config';

/** The four services of a Temporal server, each run as its own process by the local cluster. */
export const CLUSTER_SERVICES = ['history', 'matching', 'frontend', 'worker'] as const;

/** One of {@link CLUSTER_SERVICES}. */
export type ClusterServiceName = (typeof CLUSTER_SERVICES)[number];

/** Ports of one service: gRPC for callers, membership (ringpop) for its peers. */
export interface ClusterServicePorts {
  grpc: number;
  membership: number;
}

/** Where the PostgreSQL server is and who logs in (the local one trusts `postgres` without a password). */
export interface ClusterPostgres {
  host: string;
  port: number;
  user: string;
  password?: string;
}

/** Everything the server's configuration file says. */
export interface ClusterConfigSettings {
  /** The address every service binds to and announces to its peers (an IP, e.g. 127.0.0.1). */
  bindAddress: string;
  ports: Readonly<Record<ClusterServiceName, ClusterServicePorts>>;
  /** The frontend's HTTP API port. */
  frontendHttpPort: number;
  postgres: ClusterPostgres;
  /** Database of the server's own state (histories, tasks, shards, namespaces). */
  database: string;
  /** Database of visibility (list and count queries, search attributes). */
  visibilityDatabase: string;
  /** History shards: fixed for the life of the database (4 is plenty for one machine). */
  numHistoryShards: number;
  /** Path of the dynamic config file the services poll (see {@link clusterDynamicConfigYaml}). */
  dynamicConfigFile: string;
  /** Server log level (default `warn`). */
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
}

/**
 * Dynamic config of the local cluster: the dev server's tuning ({@link TUNED_DEV_SERVER_CONFIG}, unless `tuned` is
 * false) plus what the Temporal CLI's dev server sets — search attributes visible as soon as they are created, and
 * persistence rate limits raised to match — then `extra`.
 */
export function clusterDynamicConfig(
  tuned: boolean,
  extra: Readonly<Record<string, string | number | boolean>> = {},
): Record<string, string | number | boolean> {
  return {
    ...(tuned ? TUNED_DEV_SERVER_CONFIG : {}),
    'system.forceSearchAttributesCacheRefreshOnRead': true,
    'frontend.persistenceMaxQPS': 10_000,
    'history.persistenceMaxQPS': 45_000,
    ...extra,
  };
}

/** The dynamic config file's YAML: each key with one unconstrained value. */
export function clusterDynamicConfigYaml(values: Readonly<Record<string, string | number | boolean>>): string {
  return Object.entries(values)
    .map(([key, value]) => `${key}:\n  - value: ${JSON.stringify(value)}\n    constraints: {}\n`)
    .join('');
}

/**
 * The server's configuration file (`config/cluster.yaml`, loaded with `--env cluster`): PostgreSQL persistence and
 * visibility, the four services bound to `bindAddress`, one cluster named `active`, no archival, no metrics or
 * pprof listener (so nothing else takes a port).
 */
export function clusterConfigYaml(settings: ClusterConfigSettings): string {
  const { postgres, ports, bindAddress } = settings;
  const datastore = (database: string, maxConns: number) =>
    [
      `      sql:`,
      `        pluginName: "postgres12"`,
      `        databaseName: ${JSON.stringify(database)}`,
      `        connectAddr: ${JSON.stringify(`${postgres.host}:${postgres.port}`)}`,
      `        connectProtocol: "tcp"`,
      `        user: ${JSON.stringify(postgres.user)}`,
      `        password: ${JSON.stringify(postgres.password ?? '')}`,
      `        maxConns: ${maxConns}`,
      `        maxIdleConns: ${maxConns}`,
      `        maxConnLifetime: "1h"`,
    ].join('\n');
  const service = (name: ClusterServiceName) =>
    [
      `  ${name}:`,
      `    rpc:`,
      `      grpcPort: ${ports[name].grpc}`,
      `      membershipPort: ${ports[name].membership}`,
      `      bindOnIP: ${JSON.stringify(bindAddress)}`,
      ...(name === 'frontend' ? [`      httpPort: ${settings.frontendHttpPort}`] : []),
    ].join('\n');
  const frontend = `${bindAddress}:${ports.frontend.grpc}`;
  return `# Written by durable-tools (src/dev-server/cluster-config.ts); rewritten at every start.
log:
  stdout: true
  level: ${settings.logLevel ?? 'warn'}

persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: ${settings.numHistoryShards}
  datastores:
    postgres-default:
${datastore(settings.database, 20)}
    postgres-visibility:
${datastore(settings.visibilityDatabase, 4)}

global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: ${JSON.stringify(bindAddress)}

services:
${CLUSTER_SERVICES.map(service).join('\n')}

clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: "active"
  currentClusterName: "active"
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: "frontend"
      rpcAddress: ${JSON.stringify(frontend)}

dcRedirectionPolicy:
  policy: "noop"

publicClient:
  hostPort: ${JSON.stringify(frontend)}

dynamicConfigClient:
  filepath: ${JSON.stringify(settings.dynamicConfigFile)}
  pollInterval: "10s"
`;
}
