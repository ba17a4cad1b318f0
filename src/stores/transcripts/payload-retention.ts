import { TranscriptStoreError } from './transcript-store-error';

/**
 * Retention of stored payloads (claim checks: tool outputs above their budget, arguments of compensable
 * calls). A payload outlives the run that stored it by this much, so a late compensation or a replayed
 * call still finds it; past its expiry it counts as absent and the reaper deletes it.
 */
export const PAYLOAD_RETENTION = {
  /** How long a payload is kept after it was stored, unless it says its own `expiresAt`: 7 days. */
  retentionMs: 7 * 24 * 60 * 60 * 1000,
  /** How often {@link createPayloadReaper} deletes expired payloads: every 10 minutes. */
  reaperIntervalMs: 10 * 60 * 1000,
  /** Rows deleted per statement by the SQL stores, so that reaping never holds a lock for long. */
  reapBatchSize: 1_000,
} as const;

/** The environment variable of the retention, in ms (read by `transcriptStoreConfigFromEnv`). */
export const PAYLOAD_RETENTION_ENV = 'DURABLE_TOOLS_PAYLOAD_RETENTION_MS';

/** Retention options shared by the transcript stores. */
export interface PayloadRetentionOptions {
  /** How long a payload without its own `expiresAt` is kept after it was stored (default 7 days). */
  payloadRetentionMs?: number;
  /** The store's clock in epoch ms (default `Date.now`); tests inject one. */
  clock?: () => number;
}

/** The checked retention settings of a store. */
export interface PayloadRetention {
  retentionMs: number;
  clock: () => number;
}

/**
 * The retention of a store from its options.
 *
 * @throws {@link TranscriptStoreError} `INVALID_CONFIG` when `payloadRetentionMs` is not a positive number.
 */
export function payloadRetention(options: PayloadRetentionOptions = {}): PayloadRetention {
  const retentionMs = options.payloadRetentionMs ?? PAYLOAD_RETENTION.retentionMs;
  if (typeof retentionMs !== 'number' || !Number.isFinite(retentionMs) || retentionMs <= 0) {
    throw new TranscriptStoreError(
      `payloadRetentionMs must be a positive, finite number of milliseconds (got ${String(retentionMs)}); leave it out for the default (7 days).`,
      'INVALID_CONFIG',
    );
  }
  return { retentionMs: Math.ceil(retentionMs), clock: options.clock ?? Date.now };
}

/**
 * When a payload being stored expires: its own `expiresAt`, or now plus the store's retention.
 *
 * @throws {@link TranscriptStoreError} `INVALID_CONFIG` when `expiresAt` is given but not a finite number.
 */
export function expiryOf(payload: { expiresAt?: number }, retention: PayloadRetention): number {
  if (payload.expiresAt === undefined) return retention.clock() + retention.retentionMs;
  if (typeof payload.expiresAt !== 'number' || !Number.isFinite(payload.expiresAt)) {
    throw new TranscriptStoreError(
      `A stored payload's expiresAt must be a finite number of epoch milliseconds (got ${String(payload.expiresAt)}).`,
      'INVALID_CONFIG',
    );
  }
  return Math.floor(payload.expiresAt);
}

/**
 * The retention the environment asks for: `DURABLE_TOOLS_PAYLOAD_RETENTION_MS`, or undefined (the default).
 *
 * @throws {@link TranscriptStoreError} `INVALID_CONFIG` when it is set but not a positive number.
 */
export function payloadRetentionFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env[PAYLOAD_RETENTION_ENV]?.trim();
  if (!raw) return undefined;
  const ms = Number(raw);
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new TranscriptStoreError(
      `${PAYLOAD_RETENTION_ENV} must be a positive number of milliseconds, not "${raw}".`,
      'INVALID_CONFIG',
    );
  }
  return ms;
}
