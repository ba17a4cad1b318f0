import { RETRY_BUDGET_DEFAULTS, RetryBudget } from '../../src/failures/retry-budget';

/** Simulates `calls` calls under `key` against a dependency that fails every time; returns retries granted. */
function failEverything(budget: RetryBudget, key: string, calls: number, maxAttempts = 3): number {
  let retries = 0;
  for (let call = 0; call < calls; call++) {
    budget.recordFirstAttempt(key);
    for (let attempt = 1; attempt < maxAttempts; attempt++) {
      if (!budget.tryAcquireRetry(key)) break;
      retries++;
    }
  }
  return retries;
}

describe('RetryBudget', () => {
  test('a new key starts with a full bucket', () => {
    expect(new RetryBudget().available('search')).toBe(RETRY_BUDGET_DEFAULTS.capacity);
  });

  test('when a dependency fails every call, retries settle at about 10% of calls', () => {
    const budget = new RetryBudget();
    const calls = 10_000;
    const retries = failEverything(budget, 'search', calls);
    // The initial 10 tokens plus 0.1 per call: at most 10 + 1000 retries, i.e. ~10%.
    expect(retries).toBeLessThanOrEqual(RETRY_BUDGET_DEFAULTS.capacity + calls * RETRY_BUDGET_DEFAULTS.depositPerCall);
    expect(retries / calls).toBeGreaterThan(0.095);
    expect(retries / calls).toBeLessThan(0.105);
  });

  test('an empty bucket denies retries until ten first attempts refill one token', () => {
    const budget = new RetryBudget({ initialTokens: 0 });
    expect(budget.tryAcquireRetry('search')).toBe(false);
    for (let i = 0; i < 9; i++) budget.recordFirstAttempt('search');
    expect(budget.tryAcquireRetry('search')).toBe(false);
    budget.recordFirstAttempt('search');
    expect(budget.tryAcquireRetry('search')).toBe(true);
  });

  test('deposits never exceed the capacity', () => {
    const budget = new RetryBudget();
    for (let i = 0; i < 1000; i++) budget.recordFirstAttempt('search');
    expect(budget.available('search')).toBe(RETRY_BUDGET_DEFAULTS.capacity);
  });

  test('a full bucket lets a burst of capacity retries through, then stops', () => {
    const budget = new RetryBudget();
    const granted = Array.from({ length: 15 }, () => budget.tryAcquireRetry('search')).filter(Boolean).length;
    expect(granted).toBe(RETRY_BUDGET_DEFAULTS.capacity);
  });

  test('keys have separate buckets', () => {
    const budget = new RetryBudget();
    failEverything(budget, 'flaky', 100);
    expect(budget.available('healthy')).toBe(RETRY_BUDGET_DEFAULTS.capacity);
  });

  test('a denied retry withdraws nothing', () => {
    const budget = new RetryBudget({ initialTokens: 0.5 });
    expect(budget.tryAcquireRetry('search')).toBe(false);
    expect(budget.available('search')).toBe(0.5);
  });

  test('negative options are rejected', () => {
    expect(() => new RetryBudget({ depositPerCall: -1 })).toThrow(RangeError);
  });
});
