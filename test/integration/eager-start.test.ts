import { Client, Connection } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { AgentRunStartError } from '../../src/client/agent-run-start-error';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { ADD_TWO_NUMBERS_RUN, addContract } from '../support/test-tools';

/**
 * `startAgentRun(client, input, { eagerStart: true })`: Temporal's eager workflow start, for a client over the
 * connection of a worker in the same process. The server hands the first workflow task back in the start's
 * answer; the run is the same run either way.
 */

const taskQueue = uniqueTaskQueue('eager-start');
const add = addContract.implement(async ({ a, b }) => ({ sum: a + b }));
const temporal = useTestTemporal({ worker: (temporal) => createTestWorker(temporal, { tools: [add], taskQueue }) });
const input = ADD_TWO_NUMBERS_RUN;

/** A client over the worker's own connection: the only kind that can start a run eagerly. */
function clientOverWorkerConnection(): Client {
  return new Client({ connection: temporal.nativeConnection, namespace: temporal.client.options.namespace });
}

test('a run started with eagerStart on the worker connection is handed to the worker at once and completes', async () => {
  const handle = await startAgentRun(clientOverWorkerConnection(), input, { taskQueue, eagerStart: true });

  expect(handle.started).toBe(true);
  expect(handle.eagerlyStarted).toBe(true);
  const result = await waitForAgentRun(handle);
  expect(result).toMatchObject({ status: 'completed', answer: 'The sum is 5.' });
  expect(result.steps.map((step) => [step.tool, step.status])).toEqual([['add', 'succeeded']]);
});

test('a run on a task queue no worker of this process polls starts as usual, not eagerly', async () => {
  const workflowId = `eager-elsewhere-${randomUUID()}`;
  const handle = await startAgentRun(clientOverWorkerConnection(), input, {
    taskQueue: uniqueTaskQueue('eager-start-nobody'),
    workflowId,
    eagerStart: true,
  });

  expect(handle.started).toBe(true);
  expect(handle.eagerlyStarted).toBe(false);
  await handle.terminate('nobody polls this task queue');
});

test('eagerStart with a client over a plain connection throws EAGER_START_UNSUPPORTED and starts nothing', async () => {
  const workflowId = `eager-plain-${randomUUID()}`;
  const plain = new Client({
    connection: temporal.client.connection as Connection,
    namespace: temporal.client.options.namespace,
  });

  const start = startAgentRun(plain, input, { taskQueue, workflowId, eagerStart: true });

  await expect(start).rejects.toThrow(AgentRunStartError);
  await expect(start).rejects.toMatchObject({ code: 'EAGER_START_UNSUPPORTED' });
  await expect(temporal.client.workflow.getHandle(workflowId).describe()).rejects.toThrow(/not found/i);
});
