import { IDEMPOTENCY_DEFAULTS } from './idempotency-defaults';
import { checkDuration } from './idempotency-record';
import type { IdempotencyStore } from './idempotency-store';
import { createPeriodicReaper, type PeriodicReaper } from '../periodic-reaper';

/** Options of {@link createIdempotencyReaper}. */
export interface IdempotencyReaperOptions {
  /** Time between two reaps. Default 10 minutes. */
  intervalMs?: number;
  /** Called after each reap with the number of records deleted. */
  onReaped?: (count: number) => void;
  /** Called when a reap fails (the reaper keeps going). Default: ignore; the next tick tries again. */
  onError?: (error: unknown) => void;
}

/** A running reaper: `runOnce()` reaps now, `stop()` stops the timer. */
export type IdempotencyReaper = PeriodicReaper;

/**
 * Deletes records past retention every `intervalMs`. The timer is unref'd, so it never keeps a process alive,
 * and reaps never overlap. Expired records already count as absent for `begin`; reaping only frees space.
 *
 * @example
 * ```ts
 * const reaper = createIdempotencyReaper(store, { intervalMs: 60_000 });
 * // on shutdown
 * reaper.stop();
 * await store.close();
 * ```
 */
export function createIdempotencyReaper(
  store: IdempotencyStore,
  options: IdempotencyReaperOptions = {},
): IdempotencyReaper {
  const intervalMs = checkDuration(options.intervalMs ?? IDEMPOTENCY_DEFAULTS.reaperIntervalMs, 'intervalMs');
  return createPeriodicReaper(() => store.reap(), { ...options, intervalMs });
}
