import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import {
  createIdempotencyStore,
  idempotencyStoreConfigFromEnv,
  IdempotencyStoreError,
  MemoryIdempotencyStore,
  PostgresIdempotencyStore,
  SqliteIdempotencyStore,
} from '../../src/stores/idempotency';

const POSTGRES_URL = process.env.DURABLE_TOOLS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const TABLE = `idem_factory_${process.pid}_${Date.now().toString(36)}`;
const tempDir = mkdtempSync(join(tmpdir(), 'idem-factory-'));

afterAll(async () => {
  const admin = new Pool({ connectionString: POSTGRES_URL, max: 1 });
  await admin.query(`DROP TABLE IF EXISTS "${TABLE}"`);
  await admin.end();
  rmSync(tempDir, { recursive: true, force: true });
});

function configError(run: () => unknown): IdempotencyStoreError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(IdempotencyStoreError);
    return error as IdempotencyStoreError;
  }
  throw new Error('expected an IdempotencyStoreError');
}

describe('idempotencyStoreConfigFromEnv', () => {
  it('chooses SQLite in the project data directory when nothing is set', () => {
    expect(idempotencyStoreConfigFromEnv({})).toEqual({ kind: 'sqlite', path: '.data/idempotency.sqlite' });
  });

  it('takes the SQLite path from DURABLE_TOOLS_SQLITE_PATH', () => {
    const env = { DURABLE_TOOLS_IDEMPOTENCY_STORE: 'sqlite', DURABLE_TOOLS_SQLITE_PATH: '/var/lib/keys.sqlite' };

    expect(idempotencyStoreConfigFromEnv(env)).toEqual({ kind: 'sqlite', path: '/var/lib/keys.sqlite' });
  });

  it('chooses Postgres with the default local URL', () => {
    expect(idempotencyStoreConfigFromEnv({ DURABLE_TOOLS_IDEMPOTENCY_STORE: 'postgres' })).toEqual({
      kind: 'postgres',
      connectionString: 'postgres://postgres@127.0.0.1:5432/test',
    });
  });

  it('takes the Postgres URL from DURABLE_TOOLS_POSTGRES_URL', () => {
    const env = { DURABLE_TOOLS_IDEMPOTENCY_STORE: 'Postgres', DURABLE_TOOLS_POSTGRES_URL: 'postgres://db/keys' };

    expect(idempotencyStoreConfigFromEnv(env)).toEqual({ kind: 'postgres', connectionString: 'postgres://db/keys' });
  });

  it('rejects an unknown store kind with INVALID_CONFIG', () => {
    const error = configError(() => idempotencyStoreConfigFromEnv({ DURABLE_TOOLS_IDEMPOTENCY_STORE: 'redis' }));

    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.message).toMatch('redis');
  });
});

describe('createIdempotencyStore', () => {
  it('creates a SQLite store and the directory of its file', async () => {
    const path = join(tempDir, 'nested', 'dir', 'keys.sqlite');
    const store = createIdempotencyStore({ kind: 'sqlite', path });

    expect(store).toBeInstanceOf(SqliteIdempotencyStore);
    expect(await store.begin('k', 'fp', { owner: 'w' })).toMatchObject({ state: 'started' });
    expect(existsSync(path)).toBe(true);
    await store.close();
  });

  it('creates a Postgres store with its table', async () => {
    const store = createIdempotencyStore({ kind: 'postgres', connectionString: POSTGRES_URL, table: TABLE });

    expect(store).toBeInstanceOf(PostgresIdempotencyStore);
    expect(await store.begin('k', 'fp', { owner: 'w' })).toMatchObject({ state: 'started' });
    await store.close();
  });

  it('creates a memory store', () => {
    expect(createIdempotencyStore({ kind: 'memory' })).toBeInstanceOf(MemoryIdempotencyStore);
  });

  it('rejects a table name that is not a plain identifier', () => {
    expect(configError(() => createIdempotencyStore({ kind: 'postgres', table: 'keys; DROP TABLE x' })).code).toBe(
      'INVALID_CONFIG',
    );
    expect(configError(() => createIdempotencyStore({ kind: 'sqlite', table: 'a-b', path: ':memory:' })).code).toBe(
      'INVALID_CONFIG',
    );
  });

  it('reports an unreachable Postgres as STORE_UNAVAILABLE', async () => {
    const store = createIdempotencyStore({
      kind: 'postgres',
      connectionString: 'postgres://postgres@127.0.0.1:1/test',
    });

    await expect(store.begin('k', 'fp', { owner: 'w' })).rejects.toMatchObject({
      name: 'IdempotencyStoreError',
      code: 'STORE_UNAVAILABLE',
    });
    await store.close();
  });
});
