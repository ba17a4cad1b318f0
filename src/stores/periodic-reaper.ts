/** Options of {@link createPeriodicReaper}. */
export interface PeriodicReaperOptions {
  /** Time between two reaps, in ms (checked by the caller). */
  intervalMs: number;
  /** Called after each reap with the number of entries deleted. */
  onReaped?: (count: number) => void;
  /** Called when a reap fails (the reaper keeps going). Default: ignore; the next tick tries again. */
  onError?: (error: unknown) => void;
}

/** A running reaper. */
export interface PeriodicReaper {
  /** Reaps now (waiting for a reap already under way instead of starting a second one). */
  runOnce(): Promise<number>;
  /** Stops the timer; a reap under way finishes. Idempotent. */
  stop(): void;
}

/**
 * Calls `reap` every `intervalMs`: the shared engine of the idempotency reaper and the stored-payload
 * reaper. The timer is unref'd, so it never keeps a process alive, and reaps never overlap.
 */
export function createPeriodicReaper(reap: () => Promise<number>, options: PeriodicReaperOptions): PeriodicReaper {
  let running: Promise<number> | undefined;
  const runOnce = (): Promise<number> =>
    (running ??= reap()
      .then((count) => {
        options.onReaped?.(count);
        return count;
      })
      .finally(() => {
        running = undefined;
      }));
  const timer = setInterval(() => {
    runOnce().catch((error: unknown) => options.onError?.(error));
  }, options.intervalMs);
  timer.unref();
  return { runOnce, stop: () => clearInterval(timer) };
}
