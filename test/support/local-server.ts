import type { Server } from 'node:net';
import type { AddressInfo } from 'node:net';

/** Starts `server` listening on a free port of 127.0.0.1 (rejects if it cannot): the port. */
export async function listenOnFreePort(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/** Closes an HTTP(S) `server` and every connection still open to it. */
export function closeHttpServer(server: Server & { closeAllConnections(): void }): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.closeAllConnections();
    server.close((error) => (error ? reject(error) : resolve()));
  });
}
