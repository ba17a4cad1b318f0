import { IDEMPOTENCY_ENV } from '../idempotency/idempotency-defaults';
import { MemoryTranscriptStore } from './memory-transcript-store';
import {
  POSTGRES_TRANSCRIPT_DEFAULTS,
  PostgresTranscriptStore,
  type PostgresTranscriptStoreOptions,
} from './postgres-transcript-store';
import { SQLITE_TRANSCRIPT_DEFAULTS, SqliteTranscriptStore } from './sqlite-transcript-store';
import type { TranscriptStore } from './transcript-store';
import { TranscriptStoreError } from './transcript-store-error';

/** Environment variables read by {@link transcriptStoreConfigFromEnv}. */
export const TRANSCRIPT_STORE_ENV = {
  /** `sqlite` (default), `postgres` or `memory`. */
  store: 'DURABLE_TOOLS_TRANSCRIPT_STORE',
  sqlitePath: 'DURABLE_TOOLS_TRANSCRIPT_SQLITE_PATH',
  /** Shared with the idempotency store. */
  postgresUrl: IDEMPOTENCY_ENV.postgresUrl,
} as const;

/** The store kinds {@link createTranscriptStore} knows. */
export const TRANSCRIPT_STORE_KINDS = ['sqlite', 'postgres', 'memory'] as const;

/** Which transcript store to use, and its options. */
export type TranscriptStoreConfig =
  { kind: 'sqlite'; path?: string } | ({ kind: 'postgres' } & PostgresTranscriptStoreOptions) | { kind: 'memory' };

/**
 * The configuration the environment describes: `DURABLE_TOOLS_TRANSCRIPT_STORE` = `sqlite` (default) |
 * `postgres` | `memory`, with `DURABLE_TOOLS_TRANSCRIPT_SQLITE_PATH` (default `.data/transcripts.sqlite`) or
 * `DURABLE_TOOLS_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432/test`).
 *
 * @throws {@link TranscriptStoreError} `INVALID_CONFIG` for an unknown store kind.
 */
export function transcriptStoreConfigFromEnv(env: NodeJS.ProcessEnv = process.env): TranscriptStoreConfig {
  const kind = (env[TRANSCRIPT_STORE_ENV.store] ?? '').trim().toLowerCase() || 'sqlite';
  switch (kind) {
    case 'sqlite':
      return { kind, path: env[TRANSCRIPT_STORE_ENV.sqlitePath] || SQLITE_TRANSCRIPT_DEFAULTS.path };
    case 'postgres':
      return {
        kind,
        connectionString: env[TRANSCRIPT_STORE_ENV.postgresUrl] || POSTGRES_TRANSCRIPT_DEFAULTS.postgresUrl,
      };
    case 'memory':
      return { kind };
    default:
      throw new TranscriptStoreError(
        `${TRANSCRIPT_STORE_ENV.store} must be one of ${TRANSCRIPT_STORE_KINDS.join(', ')}, not "${kind}".`,
        'INVALID_CONFIG',
      );
  }
}

/**
 * Creates the transcript store a configuration names, or the one the environment names when there is no
 * configuration (see {@link transcriptStoreConfigFromEnv}). SQLite serves the worker processes of one
 * machine; Postgres is for workers on several machines; memory loses transcripts when the worker restarts.
 *
 * @example
 * ```ts
 * const transcripts = createTranscriptStore(); // SQLite at .data/transcripts.sqlite unless the env says otherwise
 * const shared = createTranscriptStore({ kind: 'postgres', connectionString: 'postgres://…' });
 * ```
 *
 * @throws {@link TranscriptStoreError} `INVALID_CONFIG` for an unknown kind or an invalid table or schema name.
 */
export function createTranscriptStore(config: TranscriptStoreConfig = transcriptStoreConfigFromEnv()): TranscriptStore {
  switch (config.kind) {
    case 'sqlite':
      return new SqliteTranscriptStore({ path: config.path });
    case 'postgres': {
      const { kind: _kind, ...options } = config;
      return new PostgresTranscriptStore(options);
    }
    case 'memory':
      return new MemoryTranscriptStore();
    default:
      throw new TranscriptStoreError(
        `Unknown transcript store kind "${String((config as { kind?: unknown }).kind)}".`,
        'INVALID_CONFIG',
      );
  }
}
