import { Worker } from '@temporalio/worker';
import { durableTools } from '../../src/runtime/durable-tools-plugin';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { callTurn, scriptedRun } from '../support/agent-runs';
import { listToolNames } from '../support/plugin-user-workflows';
import { testServer, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { createRecordingTools } from '../support/test-tools';

/*
 * The worker plugin on the real dev server (issue 43): Temporal's own `Worker.create` with
 * `plugins: [durableTools(...)]` and the app's `workflowsPath` runs the app's workflow (which calls an activity the
 * plugin registers) and the engine's `agentRun`, on the same worker.
 */

const temporal = useTestTemporal();

test("a Worker with the plugin runs the app's own workflow and an engine agent run", async () => {
  const { tools, calls } = createRecordingTools();
  const taskQueue = uniqueTaskQueue('plugin');
  const worker = await Worker.create({
    connection: temporal.nativeConnection,
    namespace: testServer().namespace,
    taskQueue,
    workflowsPath: require.resolve('../support/plugin-user-workflows'),
    plugins: [durableTools({ tools, stores: 'memory', warn: () => {} })],
  });

  const { result, names } = await worker.runUntil(async () => {
    const names = await temporal.client.workflow.execute(listToolNames, { taskQueue, workflowId: `${taskQueue}-own` });
    const run = scriptedRun('add', [callTurn('add', { a: 2, b: 40 }), { text: 'The sum is 42.', final: true }]);
    const result = await waitForAgentRun(await startAgentRun(temporal.client, run, { taskQueue }));
    return { result, names };
  });

  expect(names).toEqual(expect.arrayContaining(['add', 'read_stored_output']));
  expect(result.status).toBe('completed');
  expect(calls.map((call) => call.tool)).toEqual(['add']);
}, 300_000); // the worker bundles the app's workflows with the engine's at start
