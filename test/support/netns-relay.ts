import { createServer, connect, type Server, type Socket } from 'node:net';

/** A running {@link startTcpRelay}. */
export interface TcpRelay {
  /** `host:port` the relay listens on. */
  address: string;
  host: string;
  port: number;
  /** Connections relayed so far. */
  connections: number;
  close(): Promise<void>;
}

/**
 * A TCP relay in the root namespace: listens on `listen` and pipes each connection to `target`; when either side
 * closes or fails, so does the other (a PostgreSQL restart closes the hosts' connections, as a direct connection
 * would). It exists because the services of this machine accept connections only from 127.0.0.1 (PostgreSQL's
 * `listen_addresses` and `pg_hba.conf`), while a worker host's connections come from its own 127.O.k.2 address.
 */
export async function startTcpRelay(
  listen: { host: string; port: number },
  target: { host: string; port: number },
): Promise<TcpRelay> {
  const sockets = new Set<Socket>();
  const relay = { connections: 0 };
  const server: Server = createServer((inbound) => {
    relay.connections += 1;
    const outbound = connect({ host: target.host, port: target.port });
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.setNoDelay(true);
      socket.on('close', () => sockets.delete(socket));
    }
    inbound.pipe(outbound);
    outbound.pipe(inbound);
    const end = (): void => {
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on('error', end).on('close', end);
    outbound.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  return {
    address: `${listen.host}:${port}`,
    host: listen.host,
    port,
    get connections() {
      return relay.connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
