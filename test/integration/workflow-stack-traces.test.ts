import type { Worker } from '@temporalio/worker';
import { startPayAwaitingApproval } from '../support/approval-runs';
import { createApprovalTools } from '../support/approval-tools';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';

/*
 * A worker from `createWorker` runs its workflow threads without Temporal's per-promise stack traces unless
 * `workflowStackTraces` asks for them (src/runtime/workflow-threads.ts): the `__stack_trace` query, the UI's
 * "Stack Trace" tab, says they are off instead of answering.
 */

const temporal = useTestTemporal();

/** Runs a worker with these stack-trace settings while a run waits for approval; returns its query's answer. */
async function stackTraceOfAWaitingRun(
  workflowStackTraces: boolean | undefined,
): Promise<PromiseSettledResult<string>> {
  const taskQueue = uniqueTaskQueue('workflow-stack-traces');
  const worker: Worker = await createTestWorker(temporal, {
    tools: createApprovalTools().tools,
    taskQueue,
    ...(workflowStackTraces !== undefined ? { workflowStackTraces } : {}),
  });
  return await worker.runUntil(async () => {
    const { handle } = await startPayAwaitingApproval(temporal.client, taskQueue, 20);
    const workflow = temporal.client.workflow.getHandle(handle.workflowId);
    try {
      const [answer] = await Promise.allSettled([workflow.query<string>('__stack_trace')]);
      return answer;
    } finally {
      await workflow.terminate('test over');
    }
  });
}

test('by default the stack trace query of a run says that workflow stack traces are off', async () => {
  const answer = await stackTraceOfAWaitingRun(undefined);

  expect(answer.status).toBe('rejected');
  expect(String((answer as PromiseRejectedResult).reason)).toMatch(/stack traces are not enabled/);
});

test("with workflowStackTraces the stack trace query shows where the run waits, in the engine's sources", async () => {
  const answer = await stackTraceOfAWaitingRun(true);

  expect(answer.status).toBe('fulfilled');
  expect((answer as PromiseFulfilledResult<string>).value).toMatch(/src\/workflows\/.*\.ts/);
});
