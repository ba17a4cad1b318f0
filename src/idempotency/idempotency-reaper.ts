import { IDEMPOTENCY_DEFAULTS } from './idempotency-defaults';
import { checkDuration } from './idempotency-record';
import type { IdempotencyStore } from './idempotency-store';

/** Options of {@link createIdempotencyReaper}. */
export interface IdempotencyReaperOptions {
  /** Time between two reaps. Default 10 minutes. */
  intervalMs?: number;
  /** Called after each reap with the number of records deleted. */
  onReaped?: (count: number) => void;
  /** Called when a reap fails (the reaper keeps going). Default: ignore; the next tick tries again. */
  onError?: (error: unknown) => void;
}

/** A running reaper. */
export interface IdempotencyReaper {
  /** Reaps now (waiting for a reap already under way instead of starting a second one). */
  runOnce(): Promise<number>;
  /** Stops the timer; a reap under way finishes. Idempotent. */
  stop(): void;
}

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
  let running: Promise<number> | undefined;
  const runOnce = (): Promise<number> =>
    (running ??= store
      .reap()
      .then((count) => {
        options.onReaped?.(count);
        return count;
      })
      .finally(() => {
        running = undefined;
      }));
  const timer = setInterval(() => {
    runOnce().catch((error: unknown) => options.onError?.(error));
  }, intervalMs);
  timer.unref();
  return { runOnce, stop: () => clearInterval(timer) };
}
