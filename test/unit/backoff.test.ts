import { computeBackoffDelay, exponentialCeiling } from '../../src/failures/backoff';
import { createSeededRandom } from '../../src/failures/seeded-random';

const BASE_MS = 100;
const CAP_MS = 10_000;
const SAMPLES = 10_000;
const ATTEMPTS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];

/** One-sample Kolmogorov–Smirnov D statistic of `samples` against the uniform distribution on [0, upper]. */
function ksStatisticUniform(samples: number[], upper: number): number {
  const sorted = samples.map((x) => x / upper).sort((a, b) => a - b);
  const n = sorted.length;
  let d = 0;
  sorted.forEach((u, i) => {
    d = Math.max(d, (i + 1) / n - u, u - i / n);
  });
  return d;
}

/**
 * Asymptotic p-value P(D_n >= d): the Kolmogorov distribution Q(λ) = 2 Σ_{k≥1} (−1)^{k−1} e^{−2k²λ²},
 * with Stephens' small-sample correction λ = (√n + 0.12 + 0.11/√n)·d.
 */
function ksPValue(d: number, n: number): number {
  const sqrtN = Math.sqrt(n);
  const lambda = (sqrtN + 0.12 + 0.11 / sqrtN) * d;
  if (lambda < 1e-3) return 1;
  let sum = 0;
  for (let k = 1; k <= 100; k++) {
    const term = (k % 2 === 1 ? 1 : -1) * Math.exp(-2 * k * k * lambda * lambda);
    sum += term;
    if (Math.abs(term) < 1e-12) break;
  }
  return Math.min(1, Math.max(0, 2 * sum));
}

function fullJitterSamples(attempt: number, seed: number): number[] {
  const random = createSeededRandom(seed);
  return Array.from({ length: SAMPLES }, () =>
    computeBackoffDelay({ attempt, initialDelayMs: BASE_MS, maxDelayMs: CAP_MS, jitter: 'full' }, random),
  );
}

describe('full jitter', () => {
  test.each(ATTEMPTS)('attempt %i: 10,000 delays all lie in [0, min(cap, base·2^(attempt−1))]', (attempt) => {
    const upper = Math.min(CAP_MS, BASE_MS * 2 ** (attempt - 1));
    const samples = fullJitterSamples(attempt, 1000 + attempt);
    expect(Math.min(...samples)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...samples)).toBeLessThanOrEqual(upper);
  });

  test.each(ATTEMPTS)('attempt %i: delays pass a Kolmogorov–Smirnov test against uniform (p > 0.01)', (attempt) => {
    const upper = exponentialCeiling(attempt, BASE_MS, CAP_MS);
    const samples = fullJitterSamples(attempt, 1000 + attempt);
    const p = ksPValue(ksStatisticUniform(samples, upper), samples.length);
    expect(p).toBeGreaterThan(0.01);
  });

  test('the Kolmogorov–Smirnov check rejects a distribution that is not uniform', () => {
    const random = createSeededRandom(7);
    const skewed = Array.from({ length: SAMPLES }, () => random() ** 1.2 * 800);
    expect(ksPValue(ksStatisticUniform(skewed, 800), SAMPLES)).toBeLessThan(0.01);
  });

  test('the ceiling doubles per attempt and stops at the cap', () => {
    expect(ATTEMPTS.map((a) => exponentialCeiling(a, BASE_MS, CAP_MS))).toEqual([
      100, 200, 400, 800, 1600, 3200, 6400, 10_000, 10_000, 10_000,
    ]);
  });

  test('a huge attempt number is capped instead of overflowing', () => {
    expect(exponentialCeiling(5000, BASE_MS, CAP_MS)).toBe(CAP_MS);
  });

  test('the same seed gives the same delays', () => {
    expect(fullJitterSamples(3, 42).slice(0, 20)).toEqual(fullJitterSamples(3, 42).slice(0, 20));
  });

  test('random() = 0 gives 0 and random() just below 1 stays below the ceiling', () => {
    const input = { attempt: 3, initialDelayMs: BASE_MS, maxDelayMs: CAP_MS, jitter: 'full' } as const;
    expect(computeBackoffDelay(input, () => 0)).toBe(0);
    expect(computeBackoffDelay(input, () => 0.999999)).toBeLessThan(400);
  });

  test.each([0, -1, 1.5, Number.NaN])('attempt %p is rejected with a RangeError', (attempt) => {
    expect(() => computeBackoffDelay({ attempt, initialDelayMs: BASE_MS, maxDelayMs: CAP_MS, jitter: 'full' })).toThrow(
      RangeError,
    );
  });
});

describe('decorrelated jitter', () => {
  test('a chain of 10,000 delays, each fed the previous one, stays within [base, cap]', () => {
    const random = createSeededRandom(99);
    let previous: number | undefined;
    const delays: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const attempt = (i % 20) + 1;
      previous = computeBackoffDelay(
        { attempt, initialDelayMs: BASE_MS, maxDelayMs: CAP_MS, jitter: 'decorrelated', previousDelayMs: previous },
        random,
      );
      delays.push(previous);
    }
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(BASE_MS);
    expect(Math.max(...delays)).toBeLessThanOrEqual(CAP_MS);
    expect(Math.max(...delays)).toBe(CAP_MS); // it does reach the cap
  });

  test('without a previous delay the first delay lies in [base, 3·base]', () => {
    const random = createSeededRandom(5);
    for (let i = 0; i < 1000; i++) {
      const delay = computeBackoffDelay(
        { attempt: 1, initialDelayMs: BASE_MS, maxDelayMs: CAP_MS, jitter: 'decorrelated' },
        random,
      );
      expect(delay).toBeGreaterThanOrEqual(BASE_MS);
      expect(delay).toBeLessThanOrEqual(3 * BASE_MS);
    }
  });

  test('a previous delay below base is treated as base', () => {
    const delay = computeBackoffDelay(
      { attempt: 2, initialDelayMs: BASE_MS, maxDelayMs: CAP_MS, jitter: 'decorrelated', previousDelayMs: 1 },
      () => 0.999,
    );
    expect(delay).toBeLessThanOrEqual(3 * BASE_MS);
    expect(delay).toBeGreaterThanOrEqual(BASE_MS);
  });
});

describe('createSeededRandom', () => {
  test('returns numbers in [0, 1)', () => {
    const random = createSeededRandom(123);
    for (let i = 0; i < 10_000; i++) {
      const x = random();
      expect(x >= 0 && x < 1).toBe(true);
    }
  });

  test('different seeds give different sequences', () => {
    const a = createSeededRandom(1);
    const b = createSeededRandom(2);
    expect([a(), a(), a()]).not.toEqual([b(), b(), b()]);
  });
});
