import { IDEMPOTENCY_ENV } from '../idempotency/idempotency-defaults';
import { MemoryAuditStore } from './memory-audit-store';
import { POSTGRES_AUDIT_DEFAULTS, PostgresAuditStore, type PostgresAuditStoreOptions } from './postgres-audit-store';
import { SQLITE_AUDIT_DEFAULTS, SqliteAuditStore } from './sqlite-audit-store';
import type { AuditStore } from './audit-store';
import { AuditStoreError } from './audit-store-error';

/** Environment variables read by {@link auditStoreConfigFromEnv}. */
export const AUDIT_STORE_ENV = {
  /** `sqlite` (default), `postgres` or `memory`. */
  store: 'DURABLE_TOOLS_AUDIT_STORE',
  sqlitePath: 'DURABLE_TOOLS_AUDIT_SQLITE_PATH',
  /** Shared with the idempotency and transcript stores. */
  postgresUrl: IDEMPOTENCY_ENV.postgresUrl,
} as const;

/** The store kinds {@link createAuditStore} knows. */
export const AUDIT_STORE_KINDS = ['sqlite', 'postgres', 'memory'] as const;

/** Which audit store to use, and its options. */
export type AuditStoreConfig =
  { kind: 'sqlite'; path?: string } | ({ kind: 'postgres' } & PostgresAuditStoreOptions) | { kind: 'memory' };

/**
 * The configuration the environment describes: `DURABLE_TOOLS_AUDIT_STORE` = `sqlite` (default) | `postgres` |
 * `memory`, with `DURABLE_TOOLS_AUDIT_SQLITE_PATH` (default `.data/audit.sqlite`) or `DURABLE_TOOLS_POSTGRES_URL`.
 *
 * @throws {@link AuditStoreError} `INVALID_CONFIG` for an unknown store kind.
 */
export function auditStoreConfigFromEnv(env: NodeJS.ProcessEnv = process.env): AuditStoreConfig {
  const kind = (env[AUDIT_STORE_ENV.store] ?? '').trim().toLowerCase() || 'sqlite';
  switch (kind) {
    case 'sqlite':
      return { kind, path: env[AUDIT_STORE_ENV.sqlitePath] || SQLITE_AUDIT_DEFAULTS.path };
    case 'postgres':
      return { kind, connectionString: env[AUDIT_STORE_ENV.postgresUrl] || POSTGRES_AUDIT_DEFAULTS.postgresUrl };
    case 'memory':
      return { kind };
    default:
      throw new AuditStoreError(
        `${AUDIT_STORE_ENV.store} must be one of ${AUDIT_STORE_KINDS.join(', ')}, not "${kind}".`,
        'INVALID_CONFIG',
      );
  }
}

/**
 * Creates the audit store a configuration names, or the one the environment names (see
 * {@link auditStoreConfigFromEnv}). The worker writes the trail; `durable-tools audit` reads it.
 *
 * @example
 * ```ts
 * const auditStore = createAuditStore(); // SQLite at .data/audit.sqlite unless the env says otherwise
 * ```
 */
export function createAuditStore(config: AuditStoreConfig = auditStoreConfigFromEnv()): AuditStore {
  switch (config.kind) {
    case 'sqlite':
      return new SqliteAuditStore({ ...(config.path !== undefined ? { path: config.path } : {}) });
    case 'postgres': {
      const { kind: _kind, ...options } = config;
      return new PostgresAuditStore(options);
    }
    case 'memory':
      return new MemoryAuditStore();
    default:
      throw new AuditStoreError(
        `Unknown audit store kind "${String((config as { kind?: unknown }).kind)}".`,
        'INVALID_CONFIG',
      );
  }
}
