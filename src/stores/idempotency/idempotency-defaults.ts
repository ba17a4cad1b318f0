/**
 * Defaults of the idempotency store. Stripe keeps keys at least 24 h; a lease of 30 s matches the default
 * start-to-close timeout of one tool attempt, and holders extend it with heartbeats.
 */
export const IDEMPOTENCY_DEFAULTS = {
  /** How long a `begin` owns a key before another caller may take it over, unless heartbeats extend it. */
  leaseMs: 30_000,
  /** How long a record is kept after it finished (or after its last lease ran out). */
  retentionMs: 24 * 60 * 60 * 1000,
  /** Longest retention one finished record may name (`FinishOptions.retentionMs`): 10 years. */
  maxRecordRetentionMs: 3650 * 24 * 60 * 60 * 1000,
  /** How often {@link createIdempotencyReaper} deletes records past retention. */
  reaperIntervalMs: 10 * 60 * 1000,
  /** Table of the SQLite and Postgres stores. */
  table: 'idempotency_keys',
  /** SQLite file of the embedded store, relative to the working directory (the project's data directory). */
  sqlitePath: '.data/idempotency.sqlite',
  /** Postgres used when neither options nor `DURABLE_TOOLS_POSTGRES_URL` name one. */
  postgresUrl: 'postgres://postgres@127.0.0.1:5432/test',
} as const;

/** Environment variables read by {@link createIdempotencyStore}. */
export const IDEMPOTENCY_ENV = {
  /** `sqlite` (default) or `postgres` (or `memory`, for tests). */
  store: 'DURABLE_TOOLS_IDEMPOTENCY_STORE',
  sqlitePath: 'DURABLE_TOOLS_SQLITE_PATH',
  postgresUrl: 'DURABLE_TOOLS_POSTGRES_URL',
} as const;
