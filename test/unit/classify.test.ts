import { createServer, type AddressInfo } from 'node:net';
import { z } from 'zod';
import {
  classify,
  ERROR_NAME_RULES,
  HTTP_CONDITIONAL_RULES,
  HTTP_STATUS_CLASS_RULES,
  HTTP_STATUS_RULES,
  NETWORK_ERROR_CODE_RULES,
  UNDICI_ERROR_DEFAULT_RULE,
  UNKNOWN_ERROR_RULE,
  type ClassificationRule,
  type FailureClassification,
} from '../../src/failures/classify';
import {
  HttpStatusError,
  httpErrorFromResponse,
  PermanentToolError,
  RateLimitedToolError,
  throwForHttpStatus,
  TransientToolError,
} from '../../src/failures/tool-errors';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);

function networkError(code: string, message = `connect ${code}`): Error {
  return Object.assign(new Error(message), { code });
}

function fetchFailed(cause: unknown): TypeError {
  return new TypeError('fetch failed', { cause });
}

function expectRule(result: FailureClassification, rule: ClassificationRule): void {
  expect(result).toMatchObject({
    kind: rule.kind,
    code: rule.code,
    mayHaveHadEffect: rule.mayHaveHadEffect,
    hint: rule.hint,
  });
}

function expectModelReadable(result: FailureClassification): void {
  expect(result.message).not.toMatch(/\n\s+at /);
  expect(result.message.length).toBeGreaterThan(0);
  expect(result.hint.length).toBeGreaterThan(0);
}

describe('classify: table rows', () => {
  test.each(Object.entries(HTTP_STATUS_RULES))('HTTP %s is classified by its own row', (status, rule) => {
    const result = classify({ status: Number(status) }, NOW);
    expectRule(result, rule);
    expect(result.rule).toBe(`http:${status}`);
    expectModelReadable(result);
  });

  test.each([
    ['1xx', 102],
    ['2xx', 226],
    ['3xx', 307],
    ['4xx', 418],
    ['5xx', 599],
  ] as const)('a status without its own row falls to the %s class row (HTTP %i)', (statusClass, status) => {
    const result = classify({ status }, NOW);
    expectRule(result, HTTP_STATUS_CLASS_RULES[statusClass]);
    expect(result.rule).toBe(`http:${statusClass}`);
  });

  test.each(Object.entries(NETWORK_ERROR_CODE_RULES))('network code %s is classified by its row', (code, rule) => {
    const result = classify(networkError(code), NOW);
    expectRule(result, rule);
    expect(result.rule).toBe(`network:${code}`);
    expect(result.message).toContain(code);
  });

  test.each(Object.entries(NETWORK_ERROR_CODE_RULES))('network code %s is found inside fetch failed', (code, rule) => {
    expectRule(classify(fetchFailed(networkError(code)), NOW), rule);
  });

  test.each(Object.entries(ERROR_NAME_RULES))('an error named %s is classified by its row', (name, rule) => {
    const error = new Error('aborted');
    error.name = name;
    expectRule(classify(error, NOW), rule);
  });

  test.each(Object.entries(HTTP_CONDITIONAL_RULES))('conditional row %s has a transient kind', (_status, rule) => {
    expect(rule.kind).toBe('transient');
  });
});

describe('classify: HTTP statuses', () => {
  test.each([408, 425, 429, 500, 502, 503, 504])('HTTP %i is retryable', (status) => {
    expect(classify({ status }, NOW).kind).not.toBe('permanent');
  });

  test.each([400, 401, 403, 404, 405, 410, 422])('HTTP %i is permanent', (status) => {
    expect(classify({ status }, NOW).kind).toBe('permanent');
  });

  test('HTTP 402 is a permanent PAYMENT_REQUIRED without effect, not a permission problem', () => {
    const result = classify(new HttpStatusError(402, { statusText: 'Payment Required' }));
    expect(result).toMatchObject({ kind: 'permanent', code: 'PAYMENT_REQUIRED', mayHaveHadEffect: false });
    expect(result.hint).toMatch(/payment or billing was refused/);
  });

  test('every 4xx except 408, 425 and 429 is permanent', () => {
    for (let status = 400; status <= 499; status++) {
      const expected = [408, 425, 429].includes(status) ? 'not permanent' : 'permanent';
      const actual = classify({ status }, NOW).kind === 'permanent' ? 'permanent' : 'not permanent';
      expect({ status, kind: actual }).toEqual({ status, kind: expected });
    }
  });

  test('every status from 100 to 599 classifies without throwing and with a model-readable message', () => {
    for (let status = 100; status <= 599; status++) expectModelReadable(classify({ status }, NOW));
  });

  test.each([
    [429, 'rate-limited', false],
    [503, 'transient', false],
    [408, 'transient', false],
    [500, 'transient', true],
    [502, 'transient', true],
    [504, 'transient', true],
  ] as const)('HTTP %i is %s with mayHaveHadEffect %s', (status, kind, mayHaveHadEffect) => {
    expect(classify({ status }, NOW)).toMatchObject({ kind, mayHaveHadEffect });
  });

  test('4xx statuses never had an effect', () => {
    for (let status = 400; status <= 499; status++) expect(classify({ status }, NOW).mayHaveHadEffect).toBe(false);
  });

  test.each([501, 505, 506, 508, 510, 511])(
    'HTTP %i is permanent (a configuration that retrying cannot fix)',
    (status) => {
      expect(classify({ status }, NOW).kind).toBe('permanent');
    },
  );

  test('an unlisted 5xx is transient and may have had an effect', () => {
    expect(classify({ status: 507 }, NOW)).toMatchObject({
      kind: 'transient',
      code: 'UNAVAILABLE',
      mayHaveHadEffect: true,
    });
  });

  test('the status is read from statusCode', () => {
    expect(classify({ statusCode: 404 }, NOW).code).toBe('NOT_FOUND');
  });

  test('the status is read from response.status', () => {
    expect(classify({ response: { status: 503 } }, NOW).rule).toBe('http:503');
  });

  test('the status is read from $metadata.httpStatusCode (AWS SDK v3)', () => {
    expect(classify({ $metadata: { httpStatusCode: 429 } }, NOW).kind).toBe('rate-limited');
  });

  test('a number outside 100-599 is not taken for a status', () => {
    expect(classify({ status: 42 }, NOW).rule).toBe('unknown');
  });

  test('429 with Retry-After in seconds carries retryAfterMs', () => {
    expect(classify(new HttpStatusError(429, { headers: { 'Retry-After': '7' } }), NOW)).toMatchObject({
      kind: 'rate-limited',
      code: 'RATE_LIMITED',
      retryAfterMs: 7000,
    });
  });

  test('429 with Retry-After as an HTTP-date carries the time until that date', () => {
    const headers = new Headers({ 'retry-after': 'Thu, 01 Jan 2026 12:00:30 GMT' });
    expect(classify({ status: 429, headers }, NOW).retryAfterMs).toBe(30_000);
  });

  test('429 with retry-after-ms carries that many milliseconds', () => {
    expect(classify({ status: 429, headers: { 'retry-after-ms': '1500' } }, NOW).retryAfterMs).toBe(1500);
  });

  test('429 without Retry-After has no retryAfterMs', () => {
    expect(classify({ status: 429 }, NOW).retryAfterMs).toBeUndefined();
  });

  test('503 with Retry-After carries retryAfterMs', () => {
    expect(
      classify({ status: 503, response: { status: 503, headers: { 'retry-after': '2' } } }, NOW).retryAfterMs,
    ).toBe(2000);
  });

  test('a permanent status never carries retryAfterMs', () => {
    expect(classify(new HttpStatusError(400, { headers: { 'retry-after': '5' } }), NOW).retryAfterMs).toBeUndefined();
  });

  test('413 with Retry-After is transient', () => {
    expect(classify(new HttpStatusError(413, { headers: { 'retry-after': '10' } }), NOW)).toMatchObject({
      kind: 'transient',
      retryAfterMs: 10_000,
      rule: 'http:413-retry-after',
    });
  });

  test('413 without Retry-After is permanent', () => {
    expect(classify(new HttpStatusError(413), NOW)).toMatchObject({ kind: 'permanent', rule: 'http:413' });
  });

  test('413 with an unparseable Retry-After is permanent', () => {
    expect(classify(new HttpStatusError(413, { headers: { 'retry-after': 'later' } }), NOW).kind).toBe('permanent');
  });

  test('a plain 409 is a permanent conflict', () => {
    const error = new HttpStatusError(409, { bodyExcerpt: '{"error":"version mismatch"}' });
    expect(classify(error, NOW)).toMatchObject({ kind: 'permanent', code: 'CONFLICT', rule: 'http:409' });
  });

  test('a 409 whose body says the idempotent request is in progress is transient', () => {
    const body =
      '{"error":{"type":"idempotency_error","message":"There is currently another in-progress request using this Idempotent Key"}}';
    expect(classify(new HttpStatusError(409, { bodyExcerpt: body }), NOW)).toMatchObject({
      kind: 'transient',
      code: 'CONFLICT',
      mayHaveHadEffect: false,
      rule: 'http:409-in-flight',
    });
  });

  test('a 409 whose message says the request is in flight is transient', () => {
    expect(classify({ status: 409, message: 'request with this key is in flight' }, NOW).kind).toBe('transient');
  });

  test('a 409 with a Retry-After header is transient', () => {
    expect(classify(new HttpStatusError(409, { headers: { 'retry-after': '1' } }), NOW)).toMatchObject({
      kind: 'transient',
      retryAfterMs: 1000,
    });
  });

  test('the message quotes the start of the response body, without newlines', () => {
    const result = classify(new HttpStatusError(422, { bodyExcerpt: 'field "nights"\nmust be positive' }), NOW);
    expect(result.message).toContain('HTTP 422');
    expect(result.message).toContain('field "nights" must be positive');
  });

  test('httpErrorFromResponse keeps status, headers and a body excerpt', async () => {
    const response = new Response('x'.repeat(2000), { status: 503, headers: { 'Retry-After': '3' } });
    const error = await httpErrorFromResponse(response);
    expect(error).toMatchObject({ name: 'HttpStatusError', status: 503, retryAfter: '3' });
    expect(error.bodyExcerpt).toHaveLength(500);
    expect(classify(error, NOW).retryAfterMs).toBe(3000);
  });

  test('throwForHttpStatus returns a 2xx response unchanged', async () => {
    const response = new Response('ok', { status: 200 });
    await expect(throwForHttpStatus(response)).resolves.toBe(response);
  });

  test('throwForHttpStatus throws an HttpStatusError for a 404', async () => {
    await expect(throwForHttpStatus(new Response('no such hotel', { status: 404 }))).rejects.toMatchObject({
      status: 404,
      bodyExcerpt: 'no such hotel',
    });
  });
});

describe('classify: network errors', () => {
  test.each([
    ['ECONNREFUSED', false],
    ['ENOTFOUND', false],
    ['EAI_AGAIN', false],
    ['EHOSTUNREACH', false],
    ['ENETUNREACH', false],
    ['ECONNRESET', true],
    ['ETIMEDOUT', true],
    ['EPIPE', true],
    ['ECONNABORTED', true],
    ['UND_ERR_CONNECT_TIMEOUT', false],
    ['UND_ERR_HEADERS_TIMEOUT', true],
    ['UND_ERR_BODY_TIMEOUT', true],
    ['UND_ERR_SOCKET', true],
  ] as const)('%s is transient with mayHaveHadEffect %s', (code, mayHaveHadEffect) => {
    expect(classify(networkError(code), NOW)).toMatchObject({ kind: 'transient', mayHaveHadEffect });
  });

  test('any other UND_ERR_* code is transient and may have had an effect', () => {
    const result = classify(networkError('UND_ERR_SOMETHING_NEW'), NOW);
    expectRule(result, UNDICI_ERROR_DEFAULT_RULE);
    expect(result.rule).toBe('network:UND_ERR_*');
  });

  test('fetch failed wrapping ECONNRESET in cause is transient and may have had an effect', () => {
    const result = classify(fetchFailed(networkError('ECONNRESET', 'read ECONNRESET')), NOW);
    expect(result).toMatchObject({
      kind: 'transient',
      code: 'UNAVAILABLE',
      mayHaveHadEffect: true,
      rule: 'network:ECONNRESET',
    });
    expectModelReadable(result);
  });

  test('a code two causes deep is found', () => {
    const wrapped = new Error('booking failed', { cause: fetchFailed(networkError('ECONNREFUSED')) });
    expect(classify(wrapped, NOW).rule).toBe('network:ECONNREFUSED');
  });

  test('a code inside an AggregateError (happy eyeballs) is found', () => {
    const aggregate = new AggregateError(
      [networkError('ECONNREFUSED'), networkError('ECONNREFUSED')],
      'connect failed',
    );
    expect(classify(fetchFailed(aggregate), NOW).rule).toBe('network:ECONNREFUSED');
  });

  test('a cyclic cause chain terminates as unknown', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(classify(a, NOW).rule).toBe('unknown');
  });

  test('a real refused fetch is classified as ECONNREFUSED, never sent', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const error = await fetch(`http://127.0.0.1:${port}/`).catch((e: unknown) => e);
    expect(classify(error, NOW)).toMatchObject({ kind: 'transient', mayHaveHadEffect: false });
  });
});

describe('classify: aborts, timeouts, validation, taxonomy', () => {
  test.each([
    ['AbortError', 'This operation was aborted'],
    ['TimeoutError', 'The operation timed out.'],
  ])('a DOMException %s is a transient timeout that may have had an effect', (name, message) => {
    expect(classify(new DOMException(message, name), NOW)).toMatchObject({
      kind: 'transient',
      code: 'TIMEOUT',
      mayHaveHadEffect: true,
      rule: `name:${name}`,
    });
  });

  test('the reason of AbortSignal.timeout is classified as a timeout', async () => {
    const signal = AbortSignal.timeout(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(classify(signal.reason, NOW).code).toBe('TIMEOUT');
  });

  test('a ZodError is permanent INVALID_ARGUMENTS and lists the issues', () => {
    const parsed = z.object({ nights: z.number().int().positive() }).safeParse({ nights: '3' });
    if (parsed.success) throw new Error('expected a validation failure');
    const result = classify(parsed.error, NOW);
    expect(result).toMatchObject({
      kind: 'permanent',
      code: 'INVALID_ARGUMENTS',
      mayHaveHadEffect: false,
      rule: 'zod',
    });
    expect(result.message).toContain('nights');
  });

  test('a TransientToolError is transient with its own code, message and hint', () => {
    const error = new TransientToolError('The booking service is restarting.', { hint: 'Try in a minute.' });
    expect(classify(error, NOW)).toEqual({
      kind: 'transient',
      code: 'UNAVAILABLE',
      message: 'The booking service is restarting.',
      hint: 'Try in a minute.',
      mayHaveHadEffect: false,
      rule: 'class:TransientToolError',
    });
  });

  test('a TransientToolError can declare that it may have had an effect', () => {
    const error = new TransientToolError('Lost the answer.', { code: 'TIMEOUT', mayHaveHadEffect: true });
    expect(classify(error, NOW)).toMatchObject({ code: 'TIMEOUT', mayHaveHadEffect: true });
  });

  test('a PermanentToolError is permanent with its code and a default hint for that code', () => {
    const result = classify(new PermanentToolError('Hotel 42 does not exist.', { code: 'NOT_FOUND' }), NOW);
    expect(result).toMatchObject({ kind: 'permanent', code: 'NOT_FOUND', message: 'Hotel 42 does not exist.' });
    expect(result.hint).toMatch(/look it up/);
  });

  test('a RateLimitedToolError is rate-limited with its retryAfterMs', () => {
    expect(classify(new RateLimitedToolError('Quota exceeded.', { retryAfterMs: 1234 }), NOW)).toMatchObject({
      kind: 'rate-limited',
      code: 'RATE_LIMITED',
      retryAfterMs: 1234,
    });
  });

  test('a RateLimitedToolError ignores a negative retryAfterMs', () => {
    expect(
      classify(new RateLimitedToolError('Quota exceeded.', { retryAfterMs: -5 }), NOW).retryAfterMs,
    ).toBeUndefined();
  });

  test('a taxonomy error wins over the network error in its cause', () => {
    const error = new PermanentToolError('Card declined.', { code: 'CONFLICT', cause: networkError('ECONNRESET') });
    expect(classify(error, NOW).kind).toBe('permanent');
  });

  test('a taxonomy error found in the cause chain decides', () => {
    const error = new Error('wrapper', { cause: new TransientToolError('busy') });
    expect(classify(error, NOW).rule).toBe('class:TransientToolError');
  });
});

describe('classify: unknown errors', () => {
  test('an unknown Error is permanent INTERNAL and may have had an effect', () => {
    const result = classify(new TypeError("Cannot read properties of undefined (reading 'id')"), NOW);
    expectRule(result, UNKNOWN_ERROR_RULE);
    expect(result.rule).toBe('unknown');
  });

  test('an unknown error message never includes the stack trace', () => {
    const error = new Error('boom\n    at secret (/srv/app.js:1:1)');
    const result = classify(error, NOW);
    expect(result.message).toContain('boom');
    expect(result.message).not.toContain('/srv/app.js');
    expect(result.message).not.toContain(error.stack?.split('\n')[1] ?? '@@');
  });

  test.each([
    ['a string', 'oops'],
    ['a number', 42],
    ['null', null],
    ['undefined', undefined],
    ['a plain object', { a: 1 }],
  ])('throwing %s is classified as unknown', (_label, thrown) => {
    const result = classify(thrown, NOW);
    expect(result.rule).toBe('unknown');
    expectModelReadable(result);
  });
});
