/**
 * A deterministic source of uniform numbers in [0, 1), for tests, benchmarks and simulations that must
 * repeat exactly. Not for cryptography.
 */

/**
 * Returns a seeded pseudo-random generator (mulberry32: 32-bit state, period 2^32, passes the
 * distribution checks this project needs). The same seed always yields the same sequence.
 *
 * @param seed any number; only its low 32 bits are used.
 * @returns a function with the contract of `Math.random`: each call returns a number in [0, 1).
 *
 * @example
 * ```ts
 * const random = createSeededRandom(42);
 * computeBackoffDelay({ attempt: 2, initialDelayMs: 200, maxDelayMs: 10_000, jitter: 'full' }, random);
 * ```
 */
export function createSeededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
