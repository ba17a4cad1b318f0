import { MemoryToolLimitStore } from './memory-tool-limit-store';
import { PostgresToolLimitStore, type PostgresToolLimitStoreOptions } from './postgres-tool-limit-store';
import { SqliteToolLimitStore, type SqliteToolLimitStoreOptions } from './sqlite-tool-limit-store';
import type { ToolLimitStore } from './tool-limit-store';

/** Which tool limit store to use, and its options. */
export type ToolLimitStoreConfig =
  | ({ kind: 'sqlite' } & SqliteToolLimitStoreOptions)
  | ({ kind: 'postgres' } & PostgresToolLimitStoreOptions)
  | { kind: 'memory' };

/**
 * The configuration the environment describes: the same store as the idempotency keys
 * (`DURABLE_TOOLS_IDEMPOTENCY_STORE` = `sqlite` (default) | `postgres` | `memory`, at `DURABLE_TOOLS_SQLITE_PATH` or
 * `DURABLE_TOOLS_POSTGRES_URL`), in tables of its own; `DURABLE_TOOLS_LIMIT_STORE` overrides the kind.
 */
export function toolLimitStoreConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ToolLimitStoreConfig {
  const kind =
    (env['DURABLE_TOOLS_LIMIT_STORE'] || env['DURABLE_TOOLS_IDEMPOTENCY_STORE'] || '').trim().toLowerCase() || 'sqlite';
  switch (kind) {
    case 'sqlite':
      return { kind, path: env['DURABLE_TOOLS_SQLITE_PATH'] || '.data/idempotency.sqlite' };
    case 'postgres':
      return {
        kind,
        ...(env['DURABLE_TOOLS_POSTGRES_URL'] ? { connectionString: env['DURABLE_TOOLS_POSTGRES_URL'] } : {}),
      };
    case 'memory':
      return { kind };
    default:
      throw new TypeError(`DURABLE_TOOLS_LIMIT_STORE must be one of sqlite, postgres, memory, not "${kind}".`);
  }
}

/**
 * Creates the store of the tools' slots, rate windows and breakers: the one a configuration names, or the one the
 * environment names (see {@link toolLimitStoreConfigFromEnv}). Every worker of a task queue must share it for the
 * limits to hold across them: SQLite on one machine, Postgres across machines.
 *
 * @example
 * ```ts
 * const limits = createToolLimitStore(); // SQLite in .data/idempotency.sqlite unless the env says otherwise
 * ```
 */
export function createToolLimitStore(config: ToolLimitStoreConfig = toolLimitStoreConfigFromEnv()): ToolLimitStore {
  switch (config.kind) {
    case 'sqlite': {
      const { kind: _kind, ...options } = config;
      return new SqliteToolLimitStore(options);
    }
    case 'postgres': {
      const { kind: _kind, ...options } = config;
      return new PostgresToolLimitStore(options);
    }
    case 'memory':
      return new MemoryToolLimitStore();
    default:
      throw new TypeError(`Unknown tool limit store kind "${String((config as { kind?: unknown }).kind)}".`);
  }
}
