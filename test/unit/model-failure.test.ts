import { APICallError, LoadAPIKeyError } from '@ai-sdk/provider';
import {
  classifyModelError,
  modelRetryDelayMs,
  parseGoDuration,
  retryAfterFromHeaders,
} from '../../src/model/model-failure';

const NOW = Date.UTC(2026, 10, 30, 5, 0, 0);

function apiError(
  statusCode: number | undefined,
  message: string,
  extra: Partial<ConstructorParameters<typeof APICallError>[0]> = {},
) {
  return new APICallError({
    message,
    url: 'http://127.0.0.1/v1/chat/completions',
    requestBodyValues: {},
    statusCode,
    ...extra,
  });
}

/** The code the classification of `error` from `provider` gives, and whether it is transient. */
function codeOf(error: unknown, provider: string): { code: string; transient: boolean } {
  const { code, transient } = classifyModelError(error, { provider });
  return { code, transient };
}

describe('classifyModelError', () => {
  test('a 429 is transient and waits the Retry-After seconds', () => {
    const c = classifyModelError(apiError(429, 'Rate limit reached', { responseHeaders: { 'retry-after': '7' } }), {
      provider: 'openai',
      nowMs: NOW,
    });
    expect(c).toMatchObject({ code: 'MODEL_RATE_LIMITED', transient: true, retryAfterMs: 7_000, statusCode: 429 });
    expect(c.message).toBe('openai answered 429: Rate limit reached');
  });

  test('retry-after-ms wins over Retry-After', () => {
    expect(retryAfterFromHeaders({ 'retry-after-ms': '1500', 'retry-after': '9' }, NOW)).toBe(1_500);
  });

  test("OpenAI's reset header of an exhausted limit gives the delay", () => {
    const headers = {
      'x-ratelimit-remaining-requests': '5',
      'x-ratelimit-reset-requests': '1s',
      'x-ratelimit-remaining-tokens': '0',
      'x-ratelimit-reset-tokens': '6m0s',
    };
    expect(retryAfterFromHeaders(headers, NOW)).toBe(360_000);
  });

  test("Anthropic's reset time of an exhausted limit gives the delay", () => {
    const headers = {
      'anthropic-ratelimit-requests-remaining': '0',
      'anthropic-ratelimit-requests-reset': new Date(NOW + 12_000).toISOString(),
    };
    expect(retryAfterFromHeaders(headers, NOW)).toBe(12_000);
  });

  test('reset headers of limits that are not exhausted are ignored', () => {
    expect(
      retryAfterFromHeaders({ 'x-ratelimit-remaining-tokens': '10', 'x-ratelimit-reset-tokens': '6m0s' }, NOW),
    ).toBeUndefined();
  });

  test('an Anthropic 529 is an overload, transient', () => {
    expect(codeOf(apiError(529, 'Overloaded'), 'anthropic')).toEqual({ code: 'MODEL_OVERLOADED', transient: true });
  });

  test('a 500 and a 503 are transient', () => {
    expect(codeOf(apiError(500, 'boom'), 'openai')).toEqual({ code: 'MODEL_UNAVAILABLE', transient: true });
    expect(codeOf(apiError(503, 'busy'), 'openai')).toEqual({ code: 'MODEL_OVERLOADED', transient: true });
  });

  test('a connection error is transient', () => {
    const refused = apiError(undefined, 'Cannot connect to API: connect ECONNREFUSED', {
      isRetryable: true,
      cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }),
    });
    expect(codeOf(refused, 'openai')).toEqual({ code: 'MODEL_UNAVAILABLE', transient: true });
    const fetchFailed = new TypeError('fetch failed', {
      cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }),
    });
    expect(codeOf(fetchFailed, 'openai')).toEqual({ code: 'MODEL_UNAVAILABLE', transient: true });
  });

  test("OpenAI's context_length_exceeded is permanent with a hint", () => {
    const error = apiError(400, "This model's maximum context length is 8192 tokens.", {
      data: { error: { code: 'context_length_exceeded' } },
    });
    const c = classifyModelError(error, { provider: 'openai' });
    expect(c).toMatchObject({ code: 'MODEL_CONTEXT_LENGTH_EXCEEDED', transient: false });
    expect(c.hint).toMatch(/larger context/);
  });

  test("Anthropic's 'prompt is too long' is a context-length error", () => {
    const c = classifyModelError(apiError(400, 'prompt is too long: 210000 tokens > 200000 maximum'), {
      provider: 'anthropic',
    });
    expect(c.code).toBe('MODEL_CONTEXT_LENGTH_EXCEEDED');
  });

  test('401 and 403 are permanent and name the API key variable', () => {
    expect(classifyModelError(apiError(401, 'bad key'), { provider: 'openai' })).toMatchObject({
      code: 'MODEL_AUTHENTICATION_FAILED',
      transient: false,
      hint: expect.stringContaining('OPENAI_API_KEY'),
    });
    expect(classifyModelError(apiError(403, 'forbidden'), { provider: 'anthropic' }).hint).toContain(
      'ANTHROPIC_API_KEY',
    );
  });

  test('a missing API key is an authentication failure', () => {
    const error = new LoadAPIKeyError({ message: 'OpenAI API key is missing.' });
    expect(codeOf(error, 'openai')).toEqual({ code: 'MODEL_AUTHENTICATION_FAILED', transient: false });
  });

  test('another 400 and a 404 are permanent rejections', () => {
    expect(codeOf(apiError(400, 'temperature too high'), 'openai')).toEqual({
      code: 'MODEL_REQUEST_REJECTED',
      transient: false,
    });
    expect(classifyModelError(apiError(404, 'model not found'), { provider: 'openai' }).hint).toMatch(/model id/);
  });

  test('an error nobody recognises is permanent', () => {
    expect(classifyModelError(new Error('bug'), { provider: 'mine' })).toMatchObject({
      code: 'MODEL_PROVIDER_ERROR',
      transient: false,
      message: 'bug',
    });
  });

  test('an HTTP-like error of a hand-written provider is classified by its status', () => {
    const error = Object.assign(new Error('slow down'), { status: 429, headers: new Headers({ 'Retry-After': '3' }) });
    expect(classifyModelError(error, { provider: 'mine', nowMs: NOW })).toMatchObject({
      code: 'MODEL_RATE_LIMITED',
      retryAfterMs: 3_000,
    });
  });
});

describe('parseGoDuration', () => {
  test.each([
    ['1s', 1_000],
    ['6m0s', 360_000],
    ['20ms', 20],
    ['1h2m3.5s', 3_723_500],
  ])('%s is %d ms', (text, ms) => {
    expect(parseGoDuration(text)).toBe(ms);
  });

  test('rejects what is not a duration', () => {
    expect(parseGoDuration('soon')).toBeUndefined();
    expect(parseGoDuration('')).toBeUndefined();
  });
});

describe('modelRetryDelayMs', () => {
  test('uses the provider delay when there is one', () => {
    expect(
      modelRetryDelayMs({ code: 'MODEL_RATE_LIMITED', transient: true, message: '', hint: '', retryAfterMs: 4_000 }, 1),
    ).toBe(4_000);
  });

  test('otherwise full jitter under a growing ceiling', () => {
    const c = { code: 'MODEL_UNAVAILABLE' as const, transient: true, message: '', hint: '' };
    expect(modelRetryDelayMs(c, 3, () => 0.999)).toBeLessThanOrEqual(4_000);
    expect(modelRetryDelayMs(c, 3, () => 0.999)).toBeGreaterThan(3_900);
    expect(modelRetryDelayMs(c, 30, () => 0.999)).toBeLessThanOrEqual(30_000);
  });
});
