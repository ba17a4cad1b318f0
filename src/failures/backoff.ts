import type { JitterStrategy } from '../contract/tool-catalog-entry';

/** Growth factor of the exponential backoff: each failed attempt doubles the ceiling. */
export const BACKOFF_MULTIPLIER = 2;

/** Upper bound of the decorrelated jitter range, as a multiple of the previous delay (Brooker). */
export const DECORRELATED_JITTER_GROWTH = 3;

/** The inputs of {@link computeBackoffDelay}. */
export interface BackoffInput {
  /** The attempt that just failed, 1-based (the first call is attempt 1). */
  attempt: number;
  /** Base delay, in milliseconds. */
  initialDelayMs: number;
  /** Upper bound of any single delay, in milliseconds. */
  maxDelayMs: number;
  /** `'full'` (the default of the engine) or `'decorrelated'`. */
  jitter: JitterStrategy;
  /**
   * The delay used before the attempt that just failed; only decorrelated jitter reads it. Defaults to
   * `initialDelayMs`, as for the first retry.
   */
  previousDelayMs?: number;
}

/**
 * The capped exponential ceiling `min(cap, base · 2^(attempt − 1))`: the delay of plain exponential
 * backoff, and the upper end of the full-jitter range.
 *
 * @example
 * ```ts
 * exponentialCeiling(3, 200, 10_000); // 800
 * ```
 */
export function exponentialCeiling(attempt: number, initialDelayMs: number, maxDelayMs: number): number {
  assertValid(attempt, initialDelayMs, maxDelayMs);
  // 2^(attempt - 1) overflows to Infinity for huge attempts; min() then picks the cap, as it should.
  return Math.min(maxDelayMs, initialDelayMs * BACKOFF_MULTIPLIER ** (attempt - 1));
}

/**
 * How long to wait before the next attempt, following Marc Brooker, "Exponential Backoff And Jitter"
 * (AWS Architecture Blog):
 * - `'full'`: uniform in `[0, min(cap, base · 2^(attempt − 1))]`. Spreads contending clients best and
 *   does the least total work; the engine's default.
 * - `'decorrelated'`: `min(cap, uniform(base, previousDelay · 3))`. Grows from the previous delay
 *   instead of the attempt number, so it never sleeps less than `base`.
 *
 * The result is in fractional milliseconds (round it where an integer is needed). Throws a
 * `RangeError` for a non-integer or non-positive attempt or negative / non-finite durations.
 *
 * @param random uniform source in [0, 1); inject {@link createSeededRandom} for repeatable results.
 *
 * @example
 * ```ts
 * const delayMs = computeBackoffDelay({ attempt: 3, initialDelayMs: 200, maxDelayMs: 10_000, jitter: 'full' });
 * // 0 <= delayMs <= 800
 * ```
 */
export function computeBackoffDelay(input: BackoffInput, random: () => number = Math.random): number {
  const { attempt, initialDelayMs: base, maxDelayMs: cap, jitter } = input;
  if (jitter === 'decorrelated') {
    assertValid(attempt, base, cap);
    const previous = Math.max(base, input.previousDelayMs ?? base);
    if (!Number.isFinite(previous)) throw new RangeError(`previousDelayMs must be finite, got ${previous}.`);
    const upper = previous * DECORRELATED_JITTER_GROWTH;
    return Math.min(cap, base + random() * (upper - base));
  }
  return random() * exponentialCeiling(attempt, base, cap);
}

function assertValid(attempt: number, base: number, cap: number): void {
  if (!Number.isInteger(attempt) || attempt < 1) {
    throw new RangeError(`attempt must be an integer >= 1, got ${attempt}.`);
  }
  if (!Number.isFinite(base) || base < 0) throw new RangeError(`initialDelayMs must be >= 0, got ${base}.`);
  if (!Number.isFinite(cap) || cap < 0) throw new RangeError(`maxDelayMs must be >= 0, got ${cap}.`);
}
