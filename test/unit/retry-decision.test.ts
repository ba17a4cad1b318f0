import type { FailureClassification } from '../../src/failures/classify';
import { classify } from '../../src/failures/classify';
import { RetryBudget } from '../../src/failures/retry-budget';
import { decideRetry, type RetryDecisionInput } from '../../src/failures/retry-decision';
import { createSeededRandom } from '../../src/failures/seeded-random';
import type { ToolRetrySettings } from '../../src/contract/tool-catalog-entry';
import { DEFAULT_TOOL_RETRY } from '../../src/contract/tool-defaults';

const RETRY: ToolRetrySettings = { ...DEFAULT_TOOL_RETRY, maximumAttempts: 5 };

const transient: FailureClassification = {
  kind: 'transient',
  code: 'UNAVAILABLE',
  message: 'down',
  hint: 'later',
  mayHaveHadEffect: false,
  rule: 'test',
};

function input(overrides: Partial<RetryDecisionInput> = {}): RetryDecisionInput {
  return {
    classification: transient,
    attempt: 1,
    retry: RETRY,
    elapsedMs: 0,
    idempotent: false,
    random: () => 0.5,
    ...overrides,
  } as RetryDecisionInput;
}

/** The decision not to retry, for `reason`, ending the call with `code`. */
const stopped = (reason: string, code: string) => ({ retry: false, reason, code });

describe('decideRetry', () => {
  test('a transient failure with attempts and time left is retried after the jittered backoff', () => {
    // full jitter at attempt 2: 0.5 · min(10 000, 200 · 2) = 200
    expect(decideRetry(input({ attempt: 2 }))).toEqual({ retry: true, delayMs: 200 });
  });

  test('a permanent failure is not retried and keeps its code', () => {
    const classification = { ...transient, kind: 'permanent', code: 'NOT_FOUND' } as const;
    expect(decideRetry(input({ classification }))).toEqual({ retry: false, reason: 'permanent', code: 'NOT_FOUND' });
  });

  test('the last allowed attempt is not retried', () => {
    expect(decideRetry(input({ attempt: RETRY.maximumAttempts }))).toEqual(
      stopped('attempts-exhausted', 'UNAVAILABLE'),
    );
  });

  test('a failure that may have had an effect on a non-idempotent tool is never retried and becomes OUTCOME_UNKNOWN', () => {
    const classification = { ...transient, code: 'TIMEOUT', mayHaveHadEffect: true } as const;
    expect(decideRetry(input({ classification, idempotent: false }))).toEqual(
      stopped('may-have-had-effect', 'OUTCOME_UNKNOWN'),
    );
  });

  test('a failure that may have had an effect on an idempotent tool is retried', () => {
    const classification = { ...transient, mayHaveHadEffect: true };
    expect(decideRetry(input({ classification, idempotent: true })).retry).toBe(true);
  });

  test('fetch failed with ECONNRESET on a non-idempotent tool ends as OUTCOME_UNKNOWN', () => {
    const error = new TypeError('fetch failed', {
      cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
    });
    expect(decideRetry(input({ classification: classify(error) }))).toMatchObject({
      retry: false,
      code: 'OUTCOME_UNKNOWN',
    });
  });

  test('a rate-limited failure with Retry-After waits exactly as long as asked, even beyond maxDelayMs', () => {
    const classification = { ...transient, kind: 'rate-limited', code: 'RATE_LIMITED', retryAfterMs: 30_000 } as const;
    expect(decideRetry(input({ classification }))).toEqual({ retry: true, delayMs: 30_000 });
  });

  test('a Retry-After that would pass the total deadline stops with reason deadline', () => {
    const classification = { ...transient, kind: 'rate-limited', code: 'RATE_LIMITED', retryAfterMs: 30_000 } as const;
    expect(decideRetry(input({ classification, elapsedMs: RETRY.totalDeadlineMs - 29_999 }))).toEqual(
      stopped('deadline', 'RATE_LIMITED'),
    );
  });

  test('a rate-limited failure without Retry-After uses the jittered backoff', () => {
    const classification = { ...transient, kind: 'rate-limited', code: 'RATE_LIMITED' } as const;
    expect(decideRetry(input({ classification, attempt: 3 }))).toEqual({ retry: true, delayMs: 400 });
  });

  test('the backoff is shortened so the next attempt starts before the deadline', () => {
    const decision = decideRetry(input({ attempt: 4, random: () => 0.99, elapsedMs: RETRY.totalDeadlineMs - 50 }));
    expect(decision).toEqual({ retry: true, delayMs: 50 });
  });

  test('no time left stops with reason deadline', () => {
    expect(decideRetry(input({ elapsedMs: RETRY.totalDeadlineMs }))).toEqual(stopped('deadline', 'UNAVAILABLE'));
  });

  test('an empty retry budget stops with reason budget-exhausted', () => {
    const budget = new RetryBudget({ initialTokens: 0 });
    expect(decideRetry(input({ budget, budgetKey: 'search' }))).toEqual(stopped('budget-exhausted', 'UNAVAILABLE'));
  });

  test('a granted retry withdraws one token from the budget', () => {
    const budget = new RetryBudget();
    decideRetry(input({ budget, budgetKey: 'search' }));
    expect(budget.available('search')).toBe(9);
  });

  test('a refused retry withdraws nothing from the budget', () => {
    const budget = new RetryBudget();
    decideRetry(input({ budget, budgetKey: 'search', attempt: RETRY.maximumAttempts }));
    expect(budget.available('search')).toBe(10);
  });

  test('with a budget, retries against a dependency that always fails stay near 10% of calls', () => {
    const budget = new RetryBudget();
    const random = createSeededRandom(3);
    let retries = 0;
    const calls = 5000;
    for (let call = 0; call < calls; call++) {
      budget.recordFirstAttempt('search');
      for (let attempt = 1; ; attempt++) {
        const decision = decideRetry(input({ attempt, budget, budgetKey: 'search', random }));
        if (!decision.retry) break;
        retries++;
      }
    }
    expect(retries / calls).toBeGreaterThan(0.09);
    expect(retries / calls).toBeLessThanOrEqual(0.1 + 10 / calls);
  });

  test('decorrelated jitter grows from the previous delay', () => {
    const retry: ToolRetrySettings = { ...RETRY, jitter: 'decorrelated' };
    // uniform(200, 3 · 1000) at 0.5 = 1600
    expect(decideRetry(input({ retry, previousDelayMs: 1000 }))).toEqual({ retry: true, delayMs: 1600 });
  });

  test('delays are whole milliseconds', () => {
    const decision = decideRetry(input({ random: () => 0.123456 }));
    expect(decision.retry && Number.isInteger(decision.delayMs)).toBe(true);
  });
});
