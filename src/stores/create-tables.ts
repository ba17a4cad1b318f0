import type { Pool } from 'pg';

/** Table and schema names the Postgres stores accept (they are interpolated into SQL, so they are checked). */
export const POSTGRES_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,47}$/;

/**
 * Runs `CREATE … IF NOT EXISTS` statements in one transaction under an advisory lock named `lockName`:
 * concurrent creations from several processes can still collide in Postgres' catalog, so set-up is serialised.
 */
export async function createTablesSerialized(
  pool: Pool,
  lockName: string,
  statements: readonly string[],
): Promise<void> {
  const client = await pool.connect();
  // Out of the pool nothing else listens for `error` (see withPooledClient): a server that ends the connection
  // between two statements would otherwise end the process.
  let broken = false;
  const onError = (): void => {
    broken = true;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [lockName]);
    for (const statement of statements) await client.query(statement);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}
