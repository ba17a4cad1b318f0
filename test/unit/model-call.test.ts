import { ApplicationFailure } from '@temporalio/common';
import { APICallError } from '@ai-sdk/provider';
import { callWithDeadline, modelFailure, ModelTurnTimeoutError } from '../../src/activities/model-call';

describe('a model call with a deadline', () => {
  test('gives the provider a signal that aborts at the deadline', async () => {
    let seen: AbortSignal | undefined;
    const call = callWithDeadline(async ({ signal }) => {
      seen = signal;
      await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    }, 50);
    await expect(call).rejects.toBeInstanceOf(ModelTurnTimeoutError);
    expect(seen?.aborted).toBe(true);
  });

  test('ends at the deadline even when the provider ignores its signal', async () => {
    await expect(callWithDeadline(() => new Promise(() => undefined), 50)).rejects.toBeInstanceOf(
      ModelTurnTimeoutError,
    );
  });

  test('returns what the provider answers in time', async () => {
    await expect(callWithDeadline(async ({ deadline }) => deadline > Date.now(), 5_000)).resolves.toBe(true);
  });
});

describe('model failures for Temporal', () => {
  test('a timeout is retryable with a jittered delay', () => {
    const failure = modelFailure(new ModelTurnTimeoutError(50), 'openai', () => 0.5) as ApplicationFailure;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'MODEL_TIMEOUT', nonRetryable: false, nextRetryDelay: 500 });
  });

  /** A 429 from the provider, asking to wait `retryAfter` seconds. */
  const rateLimited = (message: string, retryAfter: string) =>
    new APICallError({
      message,
      url: 'u',
      requestBodyValues: {},
      statusCode: 429,
      responseHeaders: { 'retry-after': retryAfter },
    });

  test('a 429 waits exactly the Retry-After', () => {
    const error = rateLimited('slow down', '3');
    expect(modelFailure(error, 'openai')).toMatchObject({
      type: 'MODEL_RATE_LIMITED',
      nonRetryable: false,
      nextRetryDelay: 3_000,
    });
  });

  test('a provider asking to wait longer than ten minutes stops the call', () => {
    const error = rateLimited('quota', '3600');
    const failure = modelFailure(error, 'openai') as ApplicationFailure;
    expect(failure).toMatchObject({ type: 'MODEL_RATE_LIMITED', nonRetryable: true });
    expect(failure.message).toContain('3600 s');
  });

  test('a permanent failure carries the provider message, the hint and details', () => {
    const error = new APICallError({ message: 'invalid api key', url: 'u', requestBodyValues: {}, statusCode: 401 });
    const failure = modelFailure(error, 'openai') as ApplicationFailure;
    expect(failure).toMatchObject({ type: 'MODEL_AUTHENTICATION_FAILED', nonRetryable: true });
    expect(failure.message).toContain('openai answered 401: invalid api key');
    expect(failure.details?.[0]).toMatchObject({
      code: 'MODEL_AUTHENTICATION_FAILED',
      provider: 'openai',
      statusCode: 401,
    });
  });
});
