/**
 * A retry budget (token bucket), as in Google SRE's "retries at most 10% of requests" and the AWS SDK
 * retry quota: when a dependency fails for everyone, retries stop multiplying its load.
 *
 * The budget lives in memory and is PER WORKER PROCESS: each worker on a task queue keeps its own
 * buckets, and Temporal may run the next attempt of an activity on another worker. With W workers the
 * fleet-wide bound is W times the per-process bound, and a restart refills the buckets. That is the
 * intended trade-off: no shared state on the failure path.
 */

/** Default parameters of a {@link RetryBudget}. */
export const RETRY_BUDGET_DEFAULTS = {
  /** Most tokens a key can hold; a full bucket lets a burst of this many retries through. */
  capacity: 10,
  /** Tokens a key starts with (full, so a healthy process can retry right away). */
  initialTokens: 10,
  /** Tokens every first attempt deposits: retries settle at 10% of calls once the bucket is empty. */
  depositPerCall: 0.1,
  /** Tokens one retry withdraws. */
  costPerRetry: 1,
} as const;

/** Options of a {@link RetryBudget}; every field defaults to {@link RETRY_BUDGET_DEFAULTS}. */
export interface RetryBudgetOptions {
  capacity?: number;
  initialTokens?: number;
  depositPerCall?: number;
  costPerRetry?: number;
}

/**
 * Token buckets keyed by tool name or downstream. Every first attempt deposits
 * `depositPerCall` (0.1) of a token, every retry withdraws `costPerRetry` (1) token, and a retry is
 * allowed only while a whole token is available. Once a key's bucket is empty, retries are at most
 * 10% of first attempts for that key.
 *
 * Time plays no part: the budget refills with traffic, not with the clock, so no clock is injected.
 *
 * @example
 * ```ts
 * const budget = new RetryBudget();
 * // in the activity wrapper, at the start of attempt 1:
 * budget.recordFirstAttempt('book_hotel');
 * // on a retryable failure (decideRetry does this for you when given the budget):
 * if (!budget.tryAcquireRetry('book_hotel')) failWithoutRetry();
 * ```
 */
export class RetryBudget {
  private readonly tokens = new Map<string, number>();
  private readonly capacity: number;
  private readonly initialTokens: number;
  private readonly depositPerCall: number;
  private readonly costPerRetry: number;

  constructor(options: RetryBudgetOptions = {}) {
    this.capacity = options.capacity ?? RETRY_BUDGET_DEFAULTS.capacity;
    this.initialTokens = Math.min(this.capacity, options.initialTokens ?? RETRY_BUDGET_DEFAULTS.initialTokens);
    this.depositPerCall = options.depositPerCall ?? RETRY_BUDGET_DEFAULTS.depositPerCall;
    this.costPerRetry = options.costPerRetry ?? RETRY_BUDGET_DEFAULTS.costPerRetry;
    for (const [name, value] of Object.entries({
      capacity: this.capacity,
      initialTokens: this.initialTokens,
      depositPerCall: this.depositPerCall,
      costPerRetry: this.costPerRetry,
    })) {
      if (!Number.isFinite(value) || value < 0) throw new RangeError(`RetryBudget ${name} must be >= 0, got ${value}.`);
    }
  }

  /** Records a first attempt (attempt 1) of a call under `key`: deposits `depositPerCall` tokens. */
  recordFirstAttempt(key: string): void {
    this.tokens.set(key, Math.min(this.capacity, this.available(key) + this.depositPerCall));
  }

  /**
   * Asks for one retry under `key`. Withdraws `costPerRetry` tokens and returns `true` when the bucket
   * holds that many; otherwise returns `false` and changes nothing.
   */
  tryAcquireRetry(key: string): boolean {
    const available = this.available(key);
    // A tiny epsilon absorbs floating-point drift from adding 0.1 repeatedly (ten deposits = one token).
    if (available + 1e-9 < this.costPerRetry) return false;
    this.tokens.set(key, Math.max(0, available - this.costPerRetry));
    return true;
  }

  /** Tokens currently available under `key` (a key never seen holds `initialTokens`). */
  available(key: string): number {
    return this.tokens.get(key) ?? this.initialTokens;
  }
}
