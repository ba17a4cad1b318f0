import { z } from 'zod';
import { getAgentRunState, startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import { Worker } from '@temporalio/worker';
import { createModelActivities } from '../../src/activities/model-activities';
import { createToolActivities } from '../../src/activities/tool-activities';
import { defineTool } from '../../src/tools/define-tool';
import { createToolRegistry } from '../../src/tools/tool-registry';
import { useTestTemporal, createTestWorker, testServer, uniqueTaskQueue } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';
import { createRecordingTools } from '../support/test-tools';

const temporal = useTestTemporal();

const slowStep = defineTool({
  name: 'slow_step',
  description: 'Takes a while.',
  input: z.object({}),
  output: z.object({ finishedBy: z.string() }),
  effect: 'read-only',
  idempotent: true,
  timeout: '5 s',
  retry: { maximumAttempts: 5, initialDelay: '100 ms' },
});

test('stopping the worker mid-run and starting a new one resumes the run to completion', async () => {
  const taskQueue = uniqueTaskQueue('restart');
  const first = createRecordingTools();
  // On the first worker the slow step never finishes by itself: it ends only when the worker stops.
  const hanging = slowStep.implement(
    (_input, ctx) =>
      new Promise((_resolve, reject) =>
        ctx.signal.addEventListener('abort', () => reject(new Error('worker stopped'))),
      ),
  );
  const workerA = await createTestWorker(temporal, { tools: [...first.tools, hanging], taskQueue });
  const script: ScriptedTurn[] = [
    { toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
    { toolCalls: [{ name: 'slow_step', arguments: {} }] },
    { toolCalls: [{ name: 'set_mode', arguments: { mode: 'safe' } }] },
    { text: 'done', final: true },
  ];
  const runA = workerA.run();
  // Regular activities: a stopped worker's running activity is cancelled and retried on another worker. On the fast
  // path (the default) a worker's shutdown waits for the workflow task it runs, local calls included
  // (docs/fast-path.md, trade-offs); a killed worker's task goes to another (fast-path.test.ts).
  const handle = await startAgentRun(
    temporal.client,
    { goal: 'restart', model: { provider: 'scripted', script }, fastPath: false },
    { taskQueue },
  );
  await waitFor('the second step running', async () => {
    const state = await getAgentRunState(temporal.client, handle.workflowId);
    return state.steps[1]?.status === 'running' ? state : undefined;
  });
  workerA.shutdown();
  await runA;
  expect((await handle.describe()).status.name).toBe('RUNNING');

  const second = createRecordingTools();
  const finishing = slowStep.implement(async () => ({ finishedBy: 'worker B' }));
  const workerB = await createTestWorker(temporal, { tools: [...second.tools, finishing], taskQueue });
  const result = await workerB.runUntil(waitForAgentRun(handle));

  expect(result.status).toBe('completed');
  expect(result.steps.map((s) => [s.tool, s.status])).toEqual([
    ['add', 'succeeded'],
    ['slow_step', 'succeeded'],
    ['set_mode', 'succeeded'],
  ]);
  expect(result.steps[1]?.observation).toEqual({ status: 'ok', output: { finishedBy: 'worker B' } });
  // The step done before the stop is not repeated: its result came from history.
  expect(first.calls.map((c) => c.tool)).toEqual(['add']);
  expect(second.calls.map((c) => c.tool)).toEqual(['set_mode']);
});

test('a tool in the catalog that the worker does not implement fails clearly instead of retrying forever', async () => {
  const taskQueue = uniqueTaskQueue('not-registered');
  const { tools } = createRecordingTools();
  // The catalog advertises slow_step, but the worker has no activity of that type (a deployment mistake).
  const registry = createToolRegistry([...tools, slowStep.implement(async () => ({ finishedBy: 'nobody' }))]);
  const activities: Record<string, unknown> = {
    ...createToolActivities({ registry }),
    ...createModelActivities({ registry }),
  };
  delete activities.slow_step;
  const worker = await Worker.create({
    connection: temporal.nativeConnection,
    namespace: testServer().namespace,
    taskQueue,
    workflowBundle: { codePath: testServer().bundlePath },
    activities: activities as never,
  });
  const script: ScriptedTurn[] = [{ toolCalls: [{ name: 'slow_step', arguments: {} }] }, { text: 'done', final: true }];
  // Regular activities: the call goes to the server's task queue (this hand-made worker lacks the fast path's
  // engine activities, and on the fast path the worker that read the catalog runs the call).
  const handle = await startAgentRun(
    temporal.client,
    { goal: 'x', model: { provider: 'scripted', script }, fastPath: false },
    { taskQueue },
  );
  const result = await worker.runUntil(waitForAgentRun(handle));
  expect(result.status).toBe('completed');
  expect(result.steps[0]?.observation).toMatchObject({
    status: 'error',
    code: 'TOOL_NOT_REGISTERED',
    retryable: false,
  });
  // Not retried: the one slow_step activity ended on its first attempt (slow_step allows 5).
  const { events } = await handle.fetchHistory();
  const scheduled = events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'slow_step');
  expect(scheduled).toHaveLength(1);
  const started = events!.filter(
    (e) => Number(e.activityTaskStartedEventAttributes?.scheduledEventId) === Number(scheduled[0]!.eventId),
  );
  expect(started.map((e) => e.activityTaskStartedEventAttributes?.attempt)).toEqual([1]);
});
