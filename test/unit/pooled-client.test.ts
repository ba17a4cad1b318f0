import type { Socket } from 'node:net';
import { Pool } from 'pg';
import { withPooledClient } from '../../src/stores/pooled-client';

/**
 * A PostgreSQL restart ends every connection with `57P01 terminating connection due to administrator command`. A
 * connection out of the pool between two statements of a transaction then emits `error` with no pool listener on
 * it: found by `npm run chaos -- --topology cluster --mode restart-postgres`, where it ended a worker process.
 */
const POSTGRES_URL = process.env.DURABLE_TOOLS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

test('a connection the server ends between two statements fails the work, not the process, and is not reused', async () => {
  const pool = new Pool({ connectionString: POSTGRES_URL, max: 1 });
  const admin = new Pool({ connectionString: POSTGRES_URL, max: 1 });
  try {
    const work = withPooledClient(pool, async (client) => {
      await client.query('BEGIN');
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const closed = new Promise<void>((resolve) =>
        (client as unknown as { connection: { stream: Socket } }).connection.stream.once('close', () => resolve()),
      );
      await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
      // The server's FATAL message is read (and `error` emitted) before the socket closes.
      await closed;
      await client.query('COMMIT');
    });

    await expect(work).rejects.toThrow();
    const { rows } = await pool.query<{ one: number }>('SELECT 1 AS one');
    expect(rows[0]!.one).toBe(1);
  } finally {
    await pool.end();
    await admin.end();
  }
});
