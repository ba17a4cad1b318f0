import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client as PgClient } from 'pg';
import type { ClusterPostgres } from './cluster-config';
import { TemporalClusterError } from './cluster-error';

/** The two databases of a cluster and the schema each gets. */
export interface ClusterDatabases {
  /** The server's own state: schema `temporal/versioned`. */
  database: string;
  /** Visibility: schema `visibility/versioned`. */
  visibilityDatabase: string;
}

/**
 * Creates the cluster's databases when missing and brings both schemas to the newest version with Temporal's own
 * schema tool (`temporal-sql-tool create-database`, `setup-schema -v 0.0`, `update-schema -d <versioned dir>`),
 * from the schema files of the server's module version. An up-to-date database is left as it is; one created by
 * an older server version is upgraded. Returns what was done, one line per database.
 */
export async function ensureClusterSchema(
  sqlTool: string,
  schemaDir: string,
  postgres: ClusterPostgres,
  databases: ClusterDatabases,
): Promise<string[]> {
  const done: string[] = [];
  for (const [database, schema] of [
    [databases.database, 'temporal'],
    [databases.visibilityDatabase, 'visibility'],
  ] as const) {
    const state = await databaseState(postgres, database);
    const tool = (...args: string[]) => runSqlTool(sqlTool, postgres, database, args);
    if (state === 'missing') await tool('create-database');
    if (state !== 'versioned') await tool('setup-schema', '-v', '0.0');
    await tool('update-schema', '-d', join(schemaDir, schema, 'versioned'));
    done.push(`${database}: ${state === 'versioned' ? 'schema checked' : 'created'} (${schema} schema)`);
  }
  return done;
}

/**
 * The membership addresses (`host:port`) that services of a cluster on `database` announced in the last
 * `withinSeconds`: a cluster that may still be running there. Two clusters on one database would join each other's
 * membership ring, so a start checks this first. Empty when the database or its table does not exist yet.
 */
export async function recentClusterMembers(
  postgres: ClusterPostgres,
  database: string,
  withinSeconds = 60,
): Promise<Array<{ host: string; port: number }>> {
  if ((await databaseState(postgres, database)) !== 'versioned') return [];
  return withPg(postgres, database, async (pg) => {
    const found = await pg.query(
      "SELECT DISTINCT rpc_address, rpc_port FROM cluster_membership WHERE last_heartbeat > (now() AT TIME ZONE 'UTC') - make_interval(secs => $1)",
      [withinSeconds],
    );
    return (found.rows as Array<{ rpc_address: string; rpc_port: number }>).map((row) => ({
      host: row.rpc_address,
      port: row.rpc_port,
    }));
  });
}

/** Whether `database` exists, and whether the schema tool's version table is in it. */
async function databaseState(postgres: ClusterPostgres, database: string): Promise<'missing' | 'empty' | 'versioned'> {
  const exists = await withPg(postgres, 'postgres', async (pg) => {
    const found = await pg.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    return (found.rowCount ?? 0) > 0;
  });
  if (!exists) return 'missing';
  const versioned = await withPg(postgres, database, async (pg) => {
    const found = await pg.query("SELECT to_regclass('public.schema_version') IS NOT NULL AS versioned");
    return (found.rows[0] as { versioned: boolean }).versioned;
  });
  return versioned ? 'versioned' : 'empty';
}

async function withPg<T>(postgres: ClusterPostgres, database: string, use: (pg: PgClient) => Promise<T>): Promise<T> {
  const pg = new PgClient({
    host: postgres.host,
    port: postgres.port,
    user: postgres.user,
    ...(postgres.password ? { password: postgres.password } : {}),
    database,
  });
  try {
    await pg.connect();
  } catch (cause) {
    throw new TemporalClusterError(
      `Could not connect to PostgreSQL at ${postgres.host}:${postgres.port} as ${postgres.user} ` +
        `(${(cause as Error).message}). Start it (e.g. pg_ctlcluster 15 main start) or pass other connection settings.`,
      'SCHEMA_FAILED',
      { cause },
    );
  }
  try {
    return await use(pg);
  } finally {
    await pg.end();
  }
}

function runSqlTool(sqlTool: string, postgres: ClusterPostgres, database: string, args: string[]): Promise<void> {
  const fullArgs = [
    '--plugin',
    'postgres12',
    '--endpoint',
    postgres.host,
    '--port',
    String(postgres.port),
    '--user',
    postgres.user,
    ...(postgres.password ? ['--password', postgres.password] : []),
    '--database',
    database,
    ...args,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(sqlTool, fullArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (cause) =>
      reject(new TemporalClusterError(`Could not run ${sqlTool}: ${cause.message}`, 'SCHEMA_FAILED', { cause })),
    );
    child.on('close', (code) => {
      if (code === 0) return resolve();
      reject(
        new TemporalClusterError(
          `temporal-sql-tool ${args.join(' ')} on database ${database} failed (exit ${code}):\n` +
            output.trim().split('\n').slice(-10).join('\n'),
          'SCHEMA_FAILED',
        ),
      );
    });
  });
}
