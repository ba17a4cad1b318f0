import { createServer } from 'node:net';
import { CLUSTER_SERVICES, type ClusterServiceName, type ClusterServicePorts } from './cluster-config';
import { TemporalClusterError } from './cluster-error';

/** Every port of a cluster: each service's gRPC and membership ports, and the frontend's HTTP port. */
export interface ClusterPorts {
  services: Record<ClusterServiceName, ClusterServicePorts>;
  frontendHttp: number;
}

/**
 * The cluster's ports. Membership ports are stored in a `smallint` column of the cluster_membership table, so every
 * port is taken below 32768, where the kernel hands out no ephemeral ports; with no `basePort`, each is one that
 * nothing listens on at `host` right now.
 */
export async function chooseClusterPorts(host: string, basePort?: number): Promise<ClusterPorts> {
  const offsets: Record<ClusterServiceName, number> = { frontend: 0, history: 1, matching: 2, worker: 3 };
  const taken = new Set<number>();
  const free = async () => {
    const port = await findFreeLowPort(host, taken);
    taken.add(port);
    return port;
  };
  const services = {} as Record<ClusterServiceName, ClusterServicePorts>;
  for (const name of CLUSTER_SERVICES) {
    services[name] =
      basePort === undefined
        ? { grpc: await free(), membership: await free() }
        : { grpc: basePort + offsets[name], membership: basePort + 100 + offsets[name] };
  }
  return { services, frontendHttp: basePort === undefined ? await free() : basePort + 10 };
}

/** Lowest and highest port {@link findFreeLowPort} tries: below Linux's ephemeral range (32768–60999). */
const LOW_PORTS = { from: 20_000, to: 32_000 } as const;

/** A port in {@link LOW_PORTS} that can be bound on `host` now and is not in `taken`. */
async function findFreeLowPort(host: string, taken: ReadonlySet<number>): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = LOW_PORTS.from + Math.floor(Math.random() * (LOW_PORTS.to - LOW_PORTS.from));
    if (!taken.has(port) && (await canListen(port, host))) return port;
  }
  throw new TemporalClusterError(
    `No free port between ${LOW_PORTS.from} and ${LOW_PORTS.to} on ${host}; pass basePort.`,
    'SERVER_FAILED',
  );
}

function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const server = createServer();
    server.once('error', () => resolvePromise(false));
    server.listen(port, host, () => server.close(() => resolvePromise(true)));
  });
}

/** The port that shows a service is up: gRPC, except for the worker service, which serves none (membership). */
export function serviceListenPort(
  ports: Record<ClusterServiceName, ClusterServicePorts>,
  name: ClusterServiceName,
): number {
  return name === 'worker' ? ports.worker.membership : ports[name].grpc;
}
