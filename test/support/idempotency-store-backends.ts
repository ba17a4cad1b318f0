import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { EncryptedIdempotencyStore } from '../../src/encryption/encrypted-idempotency-store';
import {
  MemoryIdempotencyStore,
  PostgresIdempotencyStore,
  SqliteIdempotencyStore,
  type IdempotencyStore,
  type IdempotencyStoreBaseOptions,
} from '../../src/stores/idempotency';
import { keyEntry, keyringOf } from './encryption-keys';

const POSTGRES_URL = process.env.DURABLE_TOOLS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** One kind of built-in idempotency store, opened on numbered places. */
export interface StoreBackend<S extends IdempotencyStore> {
  name: string;
  /**
   * Opens a store on place `place` (a file or a table): two stores on one place share their records. Every store
   * opened is closed by {@link StoreBackends.close}.
   */
  open(place: number, options?: IdempotencyStoreBaseOptions): S;
}

/** The built-in stores of a test file, with their scratch directory, Postgres schema and place numbers. */
export interface StoreBackends<S extends IdempotencyStore> {
  backends: StoreBackend<S>[];
  /** A place no store of this file used yet. */
  nextPlace(): number;
  /** Closes every store opened, drops the Postgres schema and removes the SQLite files (for `afterAll`). */
  close(): Promise<void>;
}

/**
 * The memory, SQLite and Postgres stores (and with `encrypted`, the encryption wrapper over SQLite), each on places
 * of its own: a scratch directory and a Postgres schema named after `name` and this process. `S` is the store
 * interface the tests use (the built-in stores implement every optional method).
 */
export function idempotencyStoreBackends<S extends IdempotencyStore>(
  name: string,
  { encrypted = false }: { encrypted?: boolean } = {},
): StoreBackends<S> {
  const schema = `idem_${name}_${process.pid}_${Date.now().toString(36)}`;
  const dir = mkdtempSync(join(tmpdir(), `idem-${name}-`));
  const opened: IdempotencyStore[] = [];
  const memoryPlaces = new Map<number, MemoryIdempotencyStore>();
  const keyring = keyringOf(keyEntry('k1'));
  let places = 0;
  const remembered =
    (open: (place: number, options?: IdempotencyStoreBaseOptions) => IdempotencyStore) =>
    (place: number, options?: IdempotencyStoreBaseOptions): S => {
      const store = open(place, options);
      opened.push(store);
      return store as S;
    };
  const backends: StoreBackend<S>[] = [
    {
      // One process's memory: "two stores on one place" is the same object.
      name: 'memory',
      open: remembered((place, options) => {
        const store = memoryPlaces.get(place) ?? new MemoryIdempotencyStore(options);
        memoryPlaces.set(place, store);
        return store;
      }),
    },
    {
      name: 'sqlite',
      open: remembered(
        (place, options) => new SqliteIdempotencyStore({ ...options, path: join(dir, `s${place}.sqlite`) }),
      ),
    },
    {
      name: 'postgres',
      open: remembered(
        (place, options) =>
          new PostgresIdempotencyStore({
            ...options,
            connectionString: POSTGRES_URL,
            schema,
            table: `t${place}`,
            poolSize: 4,
          }),
      ),
    },
  ];
  if (encrypted) {
    backends.push({
      name: 'encrypted sqlite',
      open: remembered(
        (place, options) =>
          new EncryptedIdempotencyStore(
            new SqliteIdempotencyStore({ ...options, path: join(dir, `e${place}.sqlite`) }),
            keyring,
          ),
      ),
    });
  }
  return {
    backends,
    nextPlace: () => ++places,
    async close() {
      await Promise.all([...new Set(opened)].map((store) => store.close()));
      const admin = new Pool({ connectionString: POSTGRES_URL, max: 1 });
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
