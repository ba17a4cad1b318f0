import { ServiceError, WorkflowFailedError } from '@temporalio/client';
import type { WorkflowHandle } from '@temporalio/client';
import { waitForAgentRun } from '../../src/client/agent-run-client';
import { isTransientServiceError, retryTransientReads } from '../../src/client/transient-read-retry';

/** The client's error for a history read the server answered with gRPC status `code`. */
function serviceError(code: number): ServiceError {
  const grpc = Object.assign(new Error(`${code} status`), { code, details: 'server busy', metadata: {} });
  return new ServiceError('Failed to get Workflow execution history', { cause: grpc });
}

/** A clock the test moves and a sleep that moves it, recording each delay. */
function fakeTime() {
  let t = 0;
  const delays: number[] = [];
  return {
    now: () => t,
    sleep: async (ms: number) => {
      delays.push(ms);
      t += ms;
    },
    delays,
  };
}

test('a read failing with DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED or UNAVAILABLE is asked again until it answers', async () => {
  const time = fakeTime();
  const failures = [serviceError(4), serviceError(8), serviceError(14)];
  let reads = 0;
  const result = await retryTransientReads(
    async () => {
      reads += 1;
      const failure = failures.shift();
      if (failure) throw failure;
      return 'done';
    },
    { now: time.now, sleep: time.sleep },
  );
  expect(result).toBe('done');
  expect(reads).toBe(4);
  expect(time.delays).toHaveLength(3);
});

test('the delays between reads grow and stay under the cap', async () => {
  const time = fakeTime();
  let reads = 0;
  await retryTransientReads(
    async () => {
      reads += 1;
      if (reads < 12) throw serviceError(14);
      return 'done';
    },
    { now: time.now, sleep: time.sleep },
  );
  expect(time.delays[0]).toBeLessThanOrEqual(200);
  expect(Math.max(...time.delays)).toBeLessThanOrEqual(5_000);
  expect(time.delays.at(-1)!).toBeGreaterThanOrEqual(2_500);
});

test('transient failures past the budget end the wait with the last failure', async () => {
  const time = fakeTime();
  const last = serviceError(4);
  await expect(
    retryTransientReads(
      async () => {
        throw last;
      },
      { now: time.now, sleep: time.sleep, budgetMs: 10_000 },
    ),
  ).rejects.toBe(last);
  expect(time.now()).toBeGreaterThanOrEqual(10_000);
});

test('any other failure is thrown at once', async () => {
  const time = fakeTime();
  const notFound = serviceError(5);
  await expect(
    retryTransientReads(
      async () => {
        throw notFound;
      },
      { now: time.now, sleep: time.sleep },
    ),
  ).rejects.toBe(notFound);
  expect(time.delays).toEqual([]);
  expect(isTransientServiceError(new Error('plain'))).toBe(false);
  expect(isTransientServiceError(new WorkflowFailedError('failed', undefined, 'NON_RETRYABLE_FAILURE'))).toBe(false);
});

test('a transient failure after the caller aborted is thrown at once', async () => {
  const time = fakeTime();
  const controller = new AbortController();
  controller.abort();
  const shed = serviceError(4);
  await expect(
    retryTransientReads(
      async () => {
        throw shed;
      },
      { now: time.now, sleep: time.sleep, signal: controller.signal },
    ),
  ).rejects.toBe(shed);
  expect(time.delays).toEqual([]);
});

test('waitForAgentRun gets the result of a run whose first result read the server shed', async () => {
  let reads = 0;
  const handle = {
    result: async () => {
      reads += 1;
      if (reads === 1) throw serviceError(4);
      return { status: 'completed', stepCount: 2, steps: [], usage: {} };
    },
  } as unknown as WorkflowHandle;
  const result = await waitForAgentRun(handle);
  expect(result.status).toBe('completed');
  expect(reads).toBe(2);
});
