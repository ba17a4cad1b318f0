import { StreamStoreError } from './stream-store-error';

/** Default bounds of a stream store. */
export const STREAM_RETENTION = {
  /** Events kept per run: the oldest go first (default 20 000). */
  maxEventsPerRun: 20_000,
  /** How long events are kept (default 24 hours). */
  retentionMs: 24 * 60 * 60 * 1000,
  /** Longest text of one event: a longer delta is split (default 8 KiB of UTF-16 units). */
  maxEventTextChars: 8 * 1024,
  /** Appends between two sweeps of expired events (default 500). */
  sweepEveryAppends: 500,
} as const;

/** Bounds of a stream store: size per run and age. */
export interface StreamRetentionOptions {
  /** Events kept per run, oldest dropped first (default 20 000). */
  maxEventsPerRun?: number;
  /** How long an event is kept, in ms (default 24 h). */
  retentionMs?: number;
  /** Clock of the expiry, epoch ms (default `Date.now`). Tests inject one. */
  clock?: () => number;
}

/** Resolved {@link StreamRetentionOptions}. */
export interface StreamRetention {
  maxEventsPerRun: number;
  retentionMs: number;
  clock: () => number;
}

/** Checks and completes the options. @throws {@link StreamStoreError} `INVALID_CONFIG` for a bound that is not a positive number. */
export function streamRetention(options: StreamRetentionOptions = {}): StreamRetention {
  const maxEventsPerRun = options.maxEventsPerRun ?? STREAM_RETENTION.maxEventsPerRun;
  const retentionMs = options.retentionMs ?? STREAM_RETENTION.retentionMs;
  if (!Number.isInteger(maxEventsPerRun) || maxEventsPerRun < 1) {
    throw new StreamStoreError(
      `maxEventsPerRun must be a positive integer, not ${String(maxEventsPerRun)}.`,
      'INVALID_CONFIG',
    );
  }
  if (!Number.isFinite(retentionMs) || retentionMs <= 0) {
    throw new StreamStoreError(`retentionMs must be a positive number, not ${String(retentionMs)}.`, 'INVALID_CONFIG');
  }
  return { maxEventsPerRun, retentionMs, clock: options.clock ?? Date.now };
}
