import vm from 'node:vm';
import { globalHandlers } from '@temporalio/worker/lib/workflow/vm-shared';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import type { CreateWorkerOptions } from '../../src/runtime/create-worker';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { ADD_TWO_NUMBERS_RUN, addContract } from '../support/test-tools';

/**
 * The workflow sandbox of a worker from `createWorker` runs without Node's vm watchdog while the deadlock
 * detector is off (the default): a `vm.runInContext` with a timeout starts a thread per call. `debugMode` runs
 * the sandbox in this process, where the calls can be seen.
 */

const temporal = useTestTemporal();

// debugMode installs the SDK's promise hook and stack-trace handler in this process, for good ("insignificant in
// debug mode"); this jest worker goes on to run other test files, so they are taken out again.
afterAll(() => globalHandlers.uninstall());
const add = addContract.implement(async ({ a, b }) => ({ sum: a + b }));
const input = ADD_TWO_NUMBERS_RUN;

/**
 * The timeouts of the entries into a workflow sandbox while a run completes on a worker with these options (the
 * bundle's own evaluation, which the SDK runs without options, left out; its global set-up runs unbounded).
 */
async function sandboxTimeoutsOfOneRun(workerOptions: CreateWorkerOptions['workerOptions']): Promise<unknown[]> {
  const taskQueue = uniqueTaskQueue('sandbox-watchdog');
  const timeouts: unknown[] = [];
  const original = vm.Script.prototype.runInContext;
  const spy = jest.spyOn(vm.Script.prototype, 'runInContext').mockImplementation(function (
    this: vm.Script,
    context: vm.Context,
    options?: vm.RunningScriptOptions,
  ) {
    if (options !== undefined) timeouts.push(options.timeout);
    return original.call(this, context, options);
  });
  try {
    const worker = await createTestWorker(temporal, { tools: [add], taskQueue, workerOptions });
    const result = await worker.runUntil(async () =>
      waitForAgentRun(await startAgentRun(temporal.client, input, { taskQueue })),
    );
    expect(result).toMatchObject({ status: 'completed', answer: 'The sum is 5.' });
  } finally {
    spy.mockRestore();
  }
  return timeouts;
}

test('with the deadlock detector off (the default), no entry into the workflow sandbox starts a watchdog', async () => {
  const timeouts = await sandboxTimeoutsOfOneRun({ debugMode: true });

  expect(timeouts.length).toBeGreaterThan(0);
  expect(timeouts.filter((timeout) => timeout !== undefined)).toEqual([]);
});

test('a deadlock detector brought back with isolateExecutionTimeout bounds every entry into the sandbox', async () => {
  const timeouts = await sandboxTimeoutsOfOneRun({ debugMode: true, isolateExecutionTimeout: '5s' });

  const bounded = timeouts.filter((timeout) => timeout !== undefined);
  expect(bounded.length).toBeGreaterThan(0);
  expect(new Set(bounded)).toEqual(new Set([5000]));
});
