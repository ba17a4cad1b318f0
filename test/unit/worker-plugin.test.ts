import { readFileSync } from 'node:fs';
import type { WorkerOptions } from '@temporalio/worker';
import { durableTools } from '../../src/runtime/durable-tools-plugin';
import { engineWorkflowsPath } from '../../src/runtime/engine-workflows-module';
import { withoutTaskTokenInActivityLogs } from '../../src/telemetry/private-logs';
import { createRecordingTools } from '../support/test-tools';
import { addContract } from '../support/test-tools';

/*
 * What the `durableTools` plugin does to a worker's options (src/runtime/durable-tools-plugin.ts): it adds the
 * engine and changes none of the worker's own settings silently.
 */

const USER_WORKFLOWS = require.resolve('../support/plugin-user-workflows');

function baseOptions(more: Partial<WorkerOptions> = {}): WorkerOptions {
  return { taskQueue: 'plugin-unit', workflowsPath: USER_WORKFLOWS, ...more };
}

test("the plugin adds the engine's activities next to the worker's own, the task-token-free log interceptor first", async () => {
  const plugin = durableTools({ tools: createRecordingTools().tools, stores: 'memory', warn: () => {} });
  const own = () => ({ inbound: undefined });
  const options = await plugin.configureWorker(
    baseOptions({
      activities: { myActivity: async () => 1 },
      interceptors: { activity: [own] },
      maxCachedWorkflows: 7,
    }),
  );
  await plugin.close();

  expect(Object.keys(options.activities ?? {})).toEqual(
    expect.arrayContaining(['myActivity', 'add', 'describeTools', 'callModel', 'evaluateApproval']),
  );
  expect(options.interceptors?.activity).toEqual([withoutTaskTokenInActivityLogs, own]);
  expect(options.maxCachedWorkflows).toBe(7);
  expect((options as { isolateExecutionTimeout?: unknown }).isolateExecutionTimeout).toBeUndefined();
});

test('an activity of the worker with the name of a tool is an error, not overridden', async () => {
  const plugin = durableTools({ tools: createRecordingTools().tools, stores: 'memory', warn: () => {} });

  await expect(plugin.configureWorker(baseOptions({ activities: { add: async () => 0 } }))).rejects.toMatchObject({
    code: 'ACTIVITY_NAME_TAKEN',
  });
  await plugin.close();
});

test("the worker's workflows module is bundled with the engine's workflows", () => {
  const plugin = durableTools({ tools: [], stores: 'memory' });
  const { workflowsPath } = plugin.configureBundler({ workflowsPath: USER_WORKFLOWS });
  const source = readFileSync(workflowsPath, 'utf8');

  expect(source).toContain(`export * from ${JSON.stringify(USER_WORKFLOWS)};`);
  expect(source).toContain(
    `export { agentRun, mcpToolCall, durableToolCatalog, agentConversation } from ${JSON.stringify(engineWorkflowsPath())};`,
  );
  // The worker bundles through the same hook: the path it gets again is kept.
  expect(plugin.configureBundler({ workflowsPath }).workflowsPath).toBe(workflowsPath);
});

test('the engine sandbox option turns the deadlock detector off unless the worker sets it', async () => {
  const plugin = durableTools({ tools: [], stores: 'memory', engineSandbox: true });
  const off = await plugin.configureWorker(baseOptions());
  const own = await plugin.configureWorker({ ...baseOptions(), isolateExecutionTimeout: '5s' } as WorkerOptions);
  await plugin.close();

  expect((off as { isolateExecutionTimeout?: unknown }).isolateExecutionTimeout).toBe('4294967295 ms');
  expect((own as { isolateExecutionTimeout?: unknown }).isolateExecutionTimeout).toBe('5s');
});

test('a worker that runs tools with effects on memory stores warns at start; read-only tools do not', async () => {
  const warnings: string[] = [];
  const withEffects = durableTools({
    tools: createRecordingTools().tools,
    stores: 'memory',
    warn: (w) => warnings.push(w),
  });
  await withEffects.configureWorker(baseOptions());
  await withEffects.close();
  const readOnly = addContract.implement(async ({ a, b }) => ({ sum: a + b }));
  const quiet = durableTools({ tools: [readOnly], stores: 'memory', warn: (w) => warnings.push(w) });
  await quiet.configureWorker(baseOptions());
  await quiet.close();

  expect(warnings).toEqual([expect.stringMatching(/tools with effects on memory stores/)]);
});
