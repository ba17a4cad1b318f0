import { IDEMPOTENCY_DEFAULTS, IDEMPOTENCY_ENV } from './idempotency-defaults';
import type { IdempotencyStoreBaseOptions } from './idempotency-record';
import type { IdempotencyStore } from './idempotency-store';
import { IdempotencyStoreError } from './idempotency-store-error';
import { MemoryIdempotencyStore } from './memory-idempotency-store';
import { PostgresIdempotencyStore, type PostgresIdempotencyStoreOptions } from './postgres-idempotency-store';
import { SqliteIdempotencyStore, type SqliteIdempotencyStoreOptions } from './sqlite-idempotency-store';

/** Which store to use, and its options. */
export type IdempotencyStoreConfig =
  | ({ kind: 'sqlite' } & SqliteIdempotencyStoreOptions)
  | ({ kind: 'postgres' } & PostgresIdempotencyStoreOptions)
  | ({ kind: 'memory' } & IdempotencyStoreBaseOptions);

/** The store kinds {@link createIdempotencyStore} knows. */
export const IDEMPOTENCY_STORE_KINDS = ['sqlite', 'postgres', 'memory'] as const;

/**
 * The configuration the environment describes: `DURABLE_TOOLS_IDEMPOTENCY_STORE` = `sqlite` (default) |
 * `postgres` | `memory`, with `DURABLE_TOOLS_SQLITE_PATH` (default `.data/idempotency.sqlite`) or
 * `DURABLE_TOOLS_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432/test`).
 *
 * @throws {@link IdempotencyStoreError} `INVALID_CONFIG` for an unknown store kind.
 */
export function idempotencyStoreConfigFromEnv(env: NodeJS.ProcessEnv = process.env): IdempotencyStoreConfig {
  const kind = (env[IDEMPOTENCY_ENV.store] ?? '').trim().toLowerCase() || 'sqlite';
  switch (kind) {
    case 'sqlite':
      return { kind, path: env[IDEMPOTENCY_ENV.sqlitePath] || IDEMPOTENCY_DEFAULTS.sqlitePath };
    case 'postgres':
      return { kind, connectionString: env[IDEMPOTENCY_ENV.postgresUrl] || IDEMPOTENCY_DEFAULTS.postgresUrl };
    case 'memory':
      return { kind };
    default:
      throw new IdempotencyStoreError(
        `${IDEMPOTENCY_ENV.store} must be one of ${IDEMPOTENCY_STORE_KINDS.join(', ')}, not "${kind}".`,
        'INVALID_CONFIG',
      );
  }
}

/**
 * Creates the idempotency store a configuration names, or the one the environment names when there is no
 * configuration (see {@link idempotencyStoreConfigFromEnv}). SQLite is the embedded default; Postgres is for
 * workers on more than one machine.
 *
 * @example
 * ```ts
 * const store = createIdempotencyStore(); // SQLite at .data/idempotency.sqlite unless the env says otherwise
 * const shared = createIdempotencyStore({ kind: 'postgres', connectionString: 'postgres://…', table: 'keys' });
 * ```
 */
export function createIdempotencyStore(
  config: IdempotencyStoreConfig = idempotencyStoreConfigFromEnv(),
): IdempotencyStore {
  switch (config.kind) {
    case 'sqlite': {
      const { kind: _kind, ...options } = config;
      return new SqliteIdempotencyStore(options);
    }
    case 'postgres': {
      const { kind: _kind, ...options } = config;
      return new PostgresIdempotencyStore(options);
    }
    case 'memory': {
      const { kind: _kind, ...options } = config;
      return new MemoryIdempotencyStore(options);
    }
    default:
      throw new IdempotencyStoreError(
        `Unknown idempotency store kind "${String((config as { kind?: unknown }).kind)}".`,
        'INVALID_CONFIG',
      );
  }
}
