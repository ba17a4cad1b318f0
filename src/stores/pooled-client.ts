import type { Pool, PoolClient } from 'pg';

/**
 * Runs `work` on a connection from `pool` and gives it back; a connection whose work failed may be mid-transaction,
 * so it is discarded instead of returned to the pool.
 */
export async function withPooledClient<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let failed = false;
  try {
    return await work(client);
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    client.release(failed);
  }
}
