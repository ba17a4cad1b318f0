import type { Pool, PoolClient } from 'pg';

/**
 * Runs `work` on a connection from `pool` and gives it back; a connection whose work failed may be mid-transaction,
 * so it is discarded instead of returned to the pool.
 *
 * While the connection is out of the pool, nothing else listens for its `error` event (the pool listens only on idle
 * connections, `pool.query` on the one it runs): a connection the server ends between two statements of `work` (a
 * PostgreSQL restart sends `57P01 terminating connection due to administrator command`) would emit an unhandled
 * `error` and end the process. It is caught here, and the connection is discarded.
 */
export async function withPooledClient<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let failed = false;
  const onError = (): void => {
    failed = true;
  };
  client.on('error', onError);
  try {
    return await work(client);
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    client.off('error', onError);
    client.release(failed);
  }
}
