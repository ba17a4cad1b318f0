/**
 * Durable idempotency keys for tool calls: canonical fingerprints, the store contract and its SQLite
 * (embedded default), Postgres and in-memory implementations.
 */
export { canonicalJson, fingerprint, strictJsonStringify } from './canonical-json';
export {
  createIdempotencyStore,
  idempotencyStoreConfigFromEnv,
  IDEMPOTENCY_STORE_KINDS,
  type IdempotencyStoreConfig,
} from './create-idempotency-store';
export { IDEMPOTENCY_DEFAULTS, IDEMPOTENCY_ENV } from './idempotency-defaults';
export type { IdempotencyStoreBaseOptions } from './idempotency-record';
export { createIdempotencyReaper, type IdempotencyReaper, type IdempotencyReaperOptions } from './idempotency-reaper';
export type {
  BeginCompleted,
  BeginConflict,
  BeginFailed,
  BeginInFlight,
  BeginOptions,
  BeginOutcome,
  BeginOutcomeUnknown,
  BeginStarted,
  FinishOptions,
  IdempotencyStore,
  InsertOutcome,
  LookupOutcome,
  StoredFailure,
  TakeOverOptions,
} from './idempotency-store';
export {
  IdempotencyStoreError,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  type IdempotencyStoreErrorCode,
} from './idempotency-store-error';
export { MemoryIdempotencyStore, type MemoryIdempotencyStoreOptions } from './memory-idempotency-store';
export {
  PostgresIdempotencyStore,
  POSTGRES_STORE_DEFAULTS,
  type PostgresIdempotencyStoreOptions,
} from './postgres-idempotency-store';
export {
  SqliteIdempotencyStore,
  SQLITE_STORE_DEFAULTS,
  type SqliteIdempotencyStoreOptions,
} from './sqlite-idempotency-store';
