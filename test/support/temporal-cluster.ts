/**
 * The local Temporal cluster for tests and benchmarks (issue 49): the server's frontend, history, matching and
 * worker services on PostgreSQL, built from Go modules once per machine. The implementation lives in
 * src/dev-server/cluster.ts; `npm run cluster` starts the same cluster by hand.
 */
export {
  startTemporalCluster,
  CLUSTER_DEFAULTS,
  CLUSTER_TIMING,
  type TemporalCluster,
  type TemporalClusterOptions,
} from '../../src/dev-server/cluster';
export { resolveTemporalServer, findCachedTemporalServer, TEMPORAL_SERVER } from '../../src/dev-server/cluster-build';
export { findGo } from '../../src/dev-server/go-build';
export { CLUSTER_SERVICES, type ClusterServiceName } from '../../src/dev-server/cluster-config';
export { TemporalClusterError } from '../../src/dev-server/cluster-error';
