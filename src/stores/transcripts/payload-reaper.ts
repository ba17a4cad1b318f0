import { createPeriodicReaper, type PeriodicReaper } from '../periodic-reaper';
import { PAYLOAD_RETENTION } from './payload-retention';
import type { TranscriptStore } from './transcript-store';
import { TranscriptStoreError } from './transcript-store-error';

/** Options of {@link createPayloadReaper}. */
export interface PayloadReaperOptions {
  /** Time between two reaps. Default 10 minutes. */
  intervalMs?: number;
  /** Called after each reap with the number of payloads deleted. */
  onReaped?: (count: number) => void;
  /** Called when a reap fails (the reaper keeps going). Default: ignore; the next tick tries again. */
  onError?: (error: unknown) => void;
}

/** A running payload reaper: `runOnce()` reaps now, `stop()` stops the timer. */
export type PayloadReaper = PeriodicReaper;

/**
 * Deletes the stored payloads past their expiry every `intervalMs`. The timer is unref'd, so it never keeps a
 * process alive, and reaps never overlap. Expired payloads already read as absent; reaping frees the space.
 *
 * @example
 * ```ts
 * const reaper = createPayloadReaper(transcripts, { intervalMs: 60_000 });
 * // on shutdown
 * reaper.stop();
 * await transcripts.close();
 * ```
 *
 * @throws {@link TranscriptStoreError} `INVALID_CONFIG` when `intervalMs` is not a positive number.
 */
export function createPayloadReaper(
  store: Pick<TranscriptStore, 'reapPayloads'>,
  options: PayloadReaperOptions = {},
): PayloadReaper {
  const intervalMs = options.intervalMs ?? PAYLOAD_RETENTION.reaperIntervalMs;
  if (typeof intervalMs !== 'number' || !Number.isFinite(intervalMs) || intervalMs <= 0) {
    throw new TranscriptStoreError(
      `The payload reaper's intervalMs must be a positive number of milliseconds (got ${String(intervalMs)}).`,
      'INVALID_CONFIG',
    );
  }
  return createPeriodicReaper(() => store.reapPayloads(), { ...options, intervalMs });
}
