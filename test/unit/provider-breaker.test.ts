import { createProviderBreaker, providerBreakerKey } from '../../src/model/provider-breaker';

const KEY = 'openai/gpt-test';
const DOWN = { code: 'MODEL_UNAVAILABLE', message: 'connect ECONNREFUSED' };

function openBreaker(now = 1_000) {
  const breaker = createProviderBreaker({ threshold: 3, probeIntervalMs: 1_000, random: () => 1 });
  for (let i = 0; i < 3; i++) breaker.failed(KEY, now, DOWN);
  return breaker;
}

describe('the provider breaker', () => {
  test('calls go through while fewer outage failures in a row than the threshold were seen', () => {
    const breaker = createProviderBreaker({ threshold: 3 });
    breaker.failed(KEY, 0, DOWN);
    breaker.failed(KEY, 0, DOWN);
    expect(breaker.admit(KEY, 0)).toEqual({ admitted: true, probe: false });
  });

  test('once open it refuses every call until the probe interval passed, saying since when and what failed', () => {
    const breaker = openBreaker(1_000);
    expect(breaker.admit(KEY, 1_500)).toMatchObject({
      admitted: false,
      since: 1_000,
      lastCode: 'MODEL_UNAVAILABLE',
      lastError: 'connect ECONNREFUSED',
    });
  });

  test('one call at a time probes an open breaker: the others are refused while it runs', () => {
    const breaker = openBreaker(1_000);
    expect(breaker.admit(KEY, 10_000)).toMatchObject({ admitted: true, probe: true, since: 1_000 });
    expect(breaker.admit(KEY, 10_000)).toMatchObject({ admitted: false });
    expect(breaker.admit(KEY, 20_000)).toMatchObject({ admitted: false });
  });

  test('a failed probe pushes the next one further out, within the cap', () => {
    const breaker = openBreaker(0);
    expect(breaker.admit(KEY, 2_000)).toMatchObject({ admitted: true, probe: true });
    breaker.failed(KEY, 2_000, DOWN);
    const refused = breaker.admit(KEY, 2_000);
    expect(refused).toMatchObject({ admitted: false, retryAfterMs: 2_000 });
  });

  test("a provider's Retry-After holds the next probe at least that long", () => {
    const breaker = openBreaker(0);
    breaker.failed(KEY, 0, { ...DOWN, retryAfterMs: 60_000 });
    expect(breaker.admit(KEY, 59_000)).toMatchObject({ admitted: false, retryAfterMs: 1_000 });
  });

  test('an answer closes the breaker for every call', () => {
    const breaker = openBreaker(0);
    expect(breaker.admit(KEY, 5_000)).toMatchObject({ probe: true });
    breaker.succeeded(KEY);
    expect(breaker.admit(KEY, 5_000)).toEqual({ admitted: true, probe: false });
    expect(breaker.admit(KEY, 5_000)).toEqual({ admitted: true, probe: false });
  });

  test('a probe that ended without news frees the probe slot', () => {
    const breaker = openBreaker(0);
    expect(breaker.admit(KEY, 5_000)).toMatchObject({ probe: true });
    breaker.released(KEY);
    expect(breaker.admit(KEY, 5_000)).toMatchObject({ admitted: true, probe: true });
  });

  test('each provider and model has its own breaker', () => {
    const breaker = openBreaker(0);
    expect(breaker.admit('openai/other-model', 0)).toEqual({ admitted: true, probe: false });
    expect(providerBreakerKey({ provider: 'openai', model: 'gpt-test' })).toBe(KEY);
    expect(providerBreakerKey({ provider: 'anthropic' })).toBe('anthropic/');
  });
});
