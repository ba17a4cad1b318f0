import type { temporal as proto } from '@temporalio/proto';
import { z } from 'zod';
import {
  respondInSequence,
  startCountingHttpServer,
  type CannedResponse,
  type CountingHttpServer,
} from '../support/counting-http-server';
import { useTestTemporal, createTestWorker, uniqueTaskQueue } from '../support/temporal-test-env';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import { computeBackoffDelay } from '../../src/failures/backoff';
import { defineTool, type ToolRetryOptions } from '../../src/tools/define-tool';
import { createSeededRandom } from '../../src/failures/seeded-random';
import type { ToolEffect } from '../../src/contract/tool-catalog-entry';
import type { ToolErrorObservation } from '../../src/contract/activity-protocol';
import { throwForHttpStatus } from '../../src/failures/tool-errors';

/**
 * Issue 3, "Done when", on the real dev server. Temporal's history records only an activity's final
 * attempt, so every attempt count and every gap between attempts is measured by the test HTTP server,
 * with its own monotonic clock. A gap is never shorter than the delay the engine chose; how much longer it is
 * depends on the machine's load, so the delay itself is read from the history (the failure before the last
 * attempt carries it), not bounded by a clock.
 */

const temporal = useTestTemporal();
let server: CountingHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The model's second turn: it answers "saw error" when the tool call's observation was an error. */
const REACT_TO_OBSERVATION: ScriptedTurn = {
  text: 'saw success',
  final: true,
  ifPreviousFailed: { text: 'saw error', final: true },
};

/**
 * Runs one call of a tool that POSTs to the counting server (answering `responses` in order) and fails
 * through `throwForHttpStatus`, so the real classification and retry path decides.
 */
async function runHttpTool(
  name: string,
  responses: CannedResponse[],
  spec: { effect: ToolEffect; idempotent: boolean; retry?: ToolRetryOptions },
  random?: () => number,
  more: { fastPath?: false } = {},
) {
  server = await startCountingHttpServer(respondInSequence(...responses));
  const url = `${server.url}/${name}`;
  const tool = defineTool({
    name,
    description: `Calls the test server at /${name}.`,
    input: z.object({}),
    output: z.object({ ok: z.boolean() }),
    effect: spec.effect,
    idempotent: spec.idempotent,
    // These tests are about retries: the irreversible ones run without a human in the loop.
    approval: 'never',
    ...(spec.retry ? { retry: spec.retry } : {}),
  }).implement(async (_input, ctx) => {
    const response = await throwForHttpStatus(
      await fetch(url, {
        method: 'POST',
        headers: { 'idempotency-key': ctx.idempotencyKey, 'x-attempt': String(ctx.attempt) },
        body: '{}',
        signal: ctx.signal,
      }),
    );
    return (await response.json()) as { ok: boolean };
  });
  const taskQueue = uniqueTaskQueue(name);
  const worker = await createTestWorker(temporal, { tools: [tool], taskQueue, ...(random ? { random } : {}) });
  const script: ScriptedTurn[] = [{ toolCalls: [{ name, arguments: {} }] }, REACT_TO_OBSERVATION];
  const handle = await startAgentRun(
    temporal.client,
    { goal: name, model: { provider: 'scripted', script }, ...more },
    { taskQueue },
  );
  const result = await worker.runUntil(waitForAgentRun(handle));
  expect(result.status).toBe('completed');
  expect(result.steps).toHaveLength(1);
  const step = result.steps[0]!;
  const { events } = await handle.fetchHistory();
  // The history keeps the tool activity's last attempt only, with the failure of the attempt before it (on regular
  // activities, `fastPath: false`: a local activity's attempts are not in the history).
  const lastStarted = events!
    .map((event) => event.activityTaskStartedEventAttributes)
    .filter((started) => started !== undefined && started !== null)
    .find((started) => started.attempt === calls().length);
  const lastFailure = events!.find((event) => event.activityTaskFailedEventAttributes)
    ?.activityTaskFailedEventAttributes?.failure;
  return { result, step, calls: server.calls, gapsMs: server.gapsMs(), lastStarted, lastFailure };
}

/** The calls the counting server has seen in this test. */
function calls() {
  return server?.calls ?? [];
}

/** The delay, in ms, the failure of an attempt asked Temporal to wait before the next one. */
function requestedDelayMs(started: proto.api.history.v1.IActivityTaskStartedEventAttributes | undefined) {
  const delay = started?.lastFailure?.applicationFailureInfo?.nextRetryDelay;
  return delay ? Number(delay.seconds ?? 0) * 1000 + Math.round((delay.nanos ?? 0) / 1e6) : undefined;
}

describe('retries of failing tool calls, measured at the downstream', () => {
  test('a tool failing transiently twice then succeeding completes in 3 attempts, waiting the delays the engine computed', async () => {
    const seed = 80;
    const retry = { maximumAttempts: 5, initialDelay: 1500, maxDelay: 10_000, jitter: 'full' } as const;
    // The same seeded sequence the worker's wrapper draws from: one draw per retry decision (full jitter),
    // rounded up to whole ms; the 120 s default deadline is far away, so no delay is shortened by it.
    const expected = createSeededRandom(seed);
    const computedDelaysMs = [1, 2].map((attempt) =>
      Math.ceil(
        computeBackoffDelay(
          { attempt, initialDelayMs: retry.initialDelay, maxDelayMs: retry.maxDelay, jitter: retry.jitter },
          expected,
        ),
      ),
    );
    // The dev server records the next attempt as scheduled exactly `delay` after the failure, but hands a
    // retry due in under ~1 s to the worker only ~1 s after the failure (measured: nextRetryDelay 10 ms
    // gives ~1000 ms gaps, 1200 ms gives ~1220 ms). So the seed is chosen to make both delays land above
    // that floor (and differ by ~1 s): then the gaps measure the engine's delays, not the server's floor.
    for (const delay of computedDelaysMs) expect(delay).toBeGreaterThanOrEqual(1100);

    const { step, calls, gapsMs, result, lastStarted } = await runHttpTool(
      'flaky_write',
      [{ status: 503 }, { status: 500, body: 'boom' }, { status: 200, body: { ok: true } }],
      // A write the downstream deduplicates by key: a 500 (may have had an effect) is still safe to repeat.
      { effect: 'irreversible', idempotent: true, retry },
      createSeededRandom(seed),
      // Regular activities: the history's last attempt carries the delay asked (lastStarted).
      { fastPath: false },
    );

    expect(calls).toHaveLength(3);
    expect(calls.map((c) => c.headers['x-attempt'])).toEqual(['1', '2', '3']);
    expect(new Set(calls.map((c) => c.headers['idempotency-key']))).toEqual(new Set([step.idempotencyKey]));
    expect(step).toMatchObject({
      status: 'succeeded',
      attempts: 3,
      observation: { status: 'ok', output: { ok: true } },
    });
    expect(result.answer).toBe('saw success');

    console.info(
      `flaky_write gaps (server clock) vs computed delays: ${gapsMs
        .map((gap, i) => `${gap.toFixed(1)} ms vs ${computedDelaysMs[i]} ms`)
        .join('; ')}`,
    );
    expect(gapsMs).toHaveLength(2);
    gapsMs.forEach((gap, i) => {
      const computed = computedDelaysMs[i]!;
      expect(gap).toBeGreaterThanOrEqual(computed);
    });
    // The last retry waited the engine's delay, no other (not Temporal's own backoff).
    expect(requestedDelayMs(lastStarted)).toBe(computedDelaysMs[1]);
  });

  test('a 429 with Retry-After: 2 is retried no earlier than 2 s later and then succeeds', async () => {
    const { step, calls, gapsMs, lastStarted } = await runHttpTool(
      'rate_limited_read',
      [
        { status: 429, headers: { 'retry-after': '2' }, body: 'slow down' },
        { status: 200, body: { ok: true } },
      ],
      { effect: 'read-only', idempotent: true },
      undefined,
      // Regular activities: the history's last attempt carries the delay asked (lastStarted).
      { fastPath: false },
    );

    expect(calls).toHaveLength(2);
    console.info(`rate_limited_read gap after Retry-After: 2 (server clock): ${gapsMs[0]?.toFixed(1)} ms`);
    expect(gapsMs[0]).toBeGreaterThanOrEqual(2000);
    expect(requestedDelayMs(lastStarted)).toBe(2000);
    expect(step).toMatchObject({ status: 'succeeded', attempts: 2, observation: { status: 'ok' } });
  });

  test('a 400 runs exactly once and the model sees a structured REQUEST_REJECTED error, distinct from a schema error', async () => {
    const { step, calls, result } = await runHttpTool('strict_read', [{ status: 400, body: 'field "q" is required' }], {
      effect: 'read-only',
      idempotent: true,
    });

    expect(calls).toHaveLength(1);
    const observation = step.observation as ToolErrorObservation;
    expect(observation).toMatchObject({
      status: 'error',
      code: 'REQUEST_REJECTED',
      retryable: false,
      attempts: 1,
    });
    expect(observation.message).toContain('HTTP 400');
    expect(observation.message).toContain('field "q" is required');
    expect(observation.hint).toMatch(/right format, but the service refused their content/);
    expect(observation.message).not.toMatch(/\bat .*\.(ts|js):\d+/); // no stack trace
    expect(step.status).toBe('failed');
    expect(result.answer).toBe('saw error');
  });

  test('with maximumAttempts = 4 and a server always answering 503, the server sees exactly 4 calls', async () => {
    const { step, calls } = await runHttpTool('always_down', [{ status: 503, body: 'down for maintenance' }], {
      effect: 'read-only',
      idempotent: true,
      retry: { maximumAttempts: 4, initialDelay: 50, maxDelay: 200 },
    });

    expect(calls).toHaveLength(4);
    expect(step.observation).toMatchObject({ status: 'error', code: 'UNAVAILABLE', retryable: true, attempts: 4 });
    expect((step.observation as ToolErrorObservation).message).toMatch(/gave up after 4 attempts/);
    expect(step.attempts).toBe(4);
  });

  test('a non-idempotent irreversible tool whose downstream answers 500 runs once and ends with OUTCOME_UNKNOWN', async () => {
    const { step, calls, result } = await runHttpTool('send_payment', [{ status: 500, body: 'internal error' }], {
      effect: 'irreversible',
      idempotent: false,
      retry: { maximumAttempts: 5, initialDelay: 50 },
    });

    expect(calls).toHaveLength(1);
    expect(step.observation).toMatchObject({
      status: 'error',
      code: 'OUTCOME_UNKNOWN',
      retryable: false,
      attempts: 1,
    });
    expect((step.observation as ToolErrorObservation).hint).toMatch(/Check whether it took effect/);
    expect(result.answer).toBe('saw error');
  });

  test("a Retry-After longer than the tool's total deadline is not waited for: one call, then a final error", async () => {
    const { step, calls, lastStarted, lastFailure } = await runHttpTool(
      'quota_read',
      [
        { status: 429, headers: { 'retry-after': '30' } },
        { status: 200, body: { ok: true } },
      ],
      { effect: 'read-only', idempotent: true, retry: { maximumAttempts: 5, totalDeadline: '5s' } },
      undefined,
      // Regular activities: the history's last attempt and its failure are read (lastStarted, lastFailure).
      { fastPath: false },
    );

    expect(calls).toHaveLength(1);
    const observation = step.observation as ToolErrorObservation;
    // Rate limiting is not the call's fault: it may succeed later, but the engine will not wait for it now.
    expect(observation).toMatchObject({ status: 'error', code: 'RATE_LIMITED', retryable: true, attempts: 1 });
    expect(observation.message).toMatch(/time budget is spent/);
    // Neither the 30 s Retry-After nor the 5 s deadline was waited out: the one attempt ended asking for no retry.
    expect(lastStarted?.attempt).toBe(1);
    expect(lastFailure?.applicationFailureInfo).toMatchObject({ nonRetryable: true });
    expect(lastFailure?.applicationFailureInfo?.nextRetryDelay).toBeFalsy();
  });
});
