import { IDEMPOTENCY_ENV } from '../idempotency/idempotency-defaults';
import type { StreamStore } from './stream-store';
import { StreamStoreError } from './stream-store-error';
import type { StreamRetentionOptions } from './stream-retention';

/** Environment variables read by {@link streamStoreConfigFromEnv}. */
export const STREAM_STORE_ENV = {
  /** `sqlite` (default), `postgres`, `memory`, or `off` (no streaming). */
  store: 'DURABLE_TOOLS_STREAM_STORE',
  sqlitePath: 'DURABLE_TOOLS_STREAM_SQLITE_PATH',
  /** Shared with the other Postgres stores. */
  postgresUrl: IDEMPOTENCY_ENV.postgresUrl,
} as const;

/** Which stream store to open, and its options (see `docs/streaming.md`). */
export type StreamStoreConfig =
  | ({ kind: 'sqlite'; path?: string; pollMs?: number } & StreamRetentionOptions)
  | ({ kind: 'postgres'; connectionString?: string; table?: string; poolSize?: number } & StreamRetentionOptions)
  | ({ kind: 'memory' } & StreamRetentionOptions);

/**
 * The configuration the environment describes: `DURABLE_TOOLS_STREAM_STORE` = `sqlite` (default) | `postgres` |
 * `memory` | `off` (undefined: nothing streams), with `DURABLE_TOOLS_STREAM_SQLITE_PATH` (default
 * `.data/streams.sqlite`) or `DURABLE_TOOLS_POSTGRES_URL`.
 *
 * @throws {@link StreamStoreError} `INVALID_CONFIG` for an unknown kind.
 */
export function streamStoreConfigFromEnv(env: NodeJS.ProcessEnv = process.env): StreamStoreConfig | undefined {
  const kind = (env[STREAM_STORE_ENV.store] ?? '').trim().toLowerCase() || 'sqlite';
  switch (kind) {
    case 'off':
      return undefined;
    case 'sqlite':
      return { kind, path: env[STREAM_STORE_ENV.sqlitePath] || '.data/streams.sqlite' };
    case 'postgres':
      return {
        kind,
        ...(env[STREAM_STORE_ENV.postgresUrl] ? { connectionString: env[STREAM_STORE_ENV.postgresUrl] } : {}),
      };
    case 'memory':
      return { kind };
    default:
      throw new StreamStoreError(
        `${STREAM_STORE_ENV.store} must be one of sqlite, postgres, memory, off, not "${kind}".`,
        'INVALID_CONFIG',
      );
  }
}

/**
 * Opens the stream store a configuration names (default: the environment's, see {@link streamStoreConfigFromEnv};
 * undefined when it says `off`).
 * Workers publish to it and readers (`streamAgentRun`, the SSE endpoint) read from it, so both must open the same
 * one: SQLite serves the processes of one machine, Postgres several machines, memory one process. The SQLite and
 * Postgres drivers load only when opened, so the client entry stays free of them.
 *
 * @example
 * ```ts
 * const streams = await openStreamStore({ kind: 'sqlite', path: '.data/streams.sqlite' });
 * ```
 *
 * @throws {@link StreamStoreError} `INVALID_CONFIG` for an unknown kind or an invalid bound.
 */
export async function openStreamStore(config: StreamStoreConfig): Promise<StreamStore>;
/** Opens the stream store the environment names (undefined when it says `off`). */
export async function openStreamStore(config?: StreamStoreConfig): Promise<StreamStore | undefined>;
export async function openStreamStore(
  config: StreamStoreConfig | undefined = streamStoreConfigFromEnv(),
): Promise<StreamStore | undefined> {
  if (config === undefined) return undefined;
  switch (config.kind) {
    case 'sqlite': {
      const { kind: _kind, ...options } = config;
      const { SqliteStreamStore } = await import('./sqlite-stream-store');
      return new SqliteStreamStore(options);
    }
    case 'postgres': {
      const { kind: _kind, ...options } = config;
      const { PostgresStreamStore } = await import('./postgres-stream-store');
      return new PostgresStreamStore(options);
    }
    case 'memory': {
      const { kind: _kind, ...options } = config;
      const { MemoryStreamStore } = await import('./memory-stream-store');
      return new MemoryStreamStore(options);
    }
    default:
      throw new StreamStoreError(
        `Unknown stream store kind "${String((config as { kind?: unknown }).kind)}".`,
        'INVALID_CONFIG',
      );
  }
}
