import { IDEMPOTENCY_ENV } from '../idempotency/idempotency-defaults';
import { MemoryTranscriptStore, type MemoryTranscriptStoreOptions } from './memory-transcript-store';
import {
  POSTGRES_TRANSCRIPT_DEFAULTS,
  PostgresTranscriptStore,
  type PostgresTranscriptStoreOptions,
} from './postgres-transcript-store';
import { SQLITE_TRANSCRIPT_DEFAULTS, SqliteTranscriptStore } from './sqlite-transcript-store';
import type { TranscriptStore } from './transcript-store';
import { TranscriptStoreError } from './transcript-store-error';
import { PAYLOAD_RETENTION_ENV, payloadRetentionFromEnv, type PayloadRetentionOptions } from './payload-retention';

/** Environment variables read by {@link transcriptStoreConfigFromEnv}. */
export const TRANSCRIPT_STORE_ENV = {
  /** `sqlite` (default), `postgres` or `memory`. */
  store: 'DURABLE_TOOLS_TRANSCRIPT_STORE',
  sqlitePath: 'DURABLE_TOOLS_TRANSCRIPT_SQLITE_PATH',
  /** Shared with the idempotency store. */
  postgresUrl: IDEMPOTENCY_ENV.postgresUrl,
  /** How long stored payloads are kept, in ms (default 7 days). */
  payloadRetentionMs: PAYLOAD_RETENTION_ENV,
} as const;

/** The store kinds {@link createTranscriptStore} knows. */
export const TRANSCRIPT_STORE_KINDS = ['sqlite', 'postgres', 'memory'] as const;

/** Which transcript store to use, and its options. */
export type TranscriptStoreConfig =
  | ({ kind: 'sqlite'; path?: string } & PayloadRetentionOptions)
  | ({ kind: 'postgres' } & PostgresTranscriptStoreOptions)
  | ({ kind: 'memory' } & MemoryTranscriptStoreOptions);

/**
 * The configuration the environment describes: `DURABLE_TOOLS_TRANSCRIPT_STORE` = `sqlite` (default) |
 * `postgres` | `memory`, with `DURABLE_TOOLS_TRANSCRIPT_SQLITE_PATH` (default `.data/transcripts.sqlite`) or
 * `DURABLE_TOOLS_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432/test`), and
 * `DURABLE_TOOLS_PAYLOAD_RETENTION_MS` (how long stored payloads are kept; default 7 days).
 *
 * @throws {@link TranscriptStoreError} `INVALID_CONFIG` for an unknown store kind or a retention that is not a
 * positive number.
 */
export function transcriptStoreConfigFromEnv(env: NodeJS.ProcessEnv = process.env): TranscriptStoreConfig {
  const kind = (env[TRANSCRIPT_STORE_ENV.store] ?? '').trim().toLowerCase() || 'sqlite';
  const retentionMs = payloadRetentionFromEnv(env);
  const retention = retentionMs === undefined ? {} : { payloadRetentionMs: retentionMs };
  switch (kind) {
    case 'sqlite':
      return { kind, path: env[TRANSCRIPT_STORE_ENV.sqlitePath] || SQLITE_TRANSCRIPT_DEFAULTS.path, ...retention };
    case 'postgres':
      return {
        kind,
        connectionString: env[TRANSCRIPT_STORE_ENV.postgresUrl] || POSTGRES_TRANSCRIPT_DEFAULTS.postgresUrl,
        ...retention,
      };
    case 'memory':
      return { kind, ...retention };
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
    case 'sqlite': {
      const { kind: _kind, ...options } = config;
      return new SqliteTranscriptStore(options);
    }
    case 'postgres': {
      const { kind: _kind, ...options } = config;
      return new PostgresTranscriptStore(options);
    }
    case 'memory': {
      const { kind: _kind, ...options } = config;
      return new MemoryTranscriptStore(options);
    }
    default:
      throw new TranscriptStoreError(
        `Unknown transcript store kind "${String((config as { kind?: unknown }).kind)}".`,
        'INVALID_CONFIG',
      );
  }
}
