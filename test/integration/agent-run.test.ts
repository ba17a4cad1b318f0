import { createRecordingTools } from '../support/test-tools';
import { useTestTemporal, createTestWorker, uniqueTaskQueue } from '../support/temporal-test-env';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import type { AgentRunInput } from '../../src/contract/agent-run-types';

const temporal = useTestTemporal();

/** Runs `script`; `more` is merged into the run's input (`fastPath: false`: every step a regular activity). */
async function runScript(name: string, script: ScriptedTurn[], more: Omit<AgentRunInput, 'goal' | 'model'> = {}) {
  const { tools, calls } = createRecordingTools();
  const taskQueue = uniqueTaskQueue(name);
  const worker = await createTestWorker(temporal, { tools, taskQueue });
  const { result, handle } = await worker.runUntil(async () => {
    const handle = await startAgentRun(
      temporal.client,
      { goal: name, model: { provider: 'scripted', script }, ...more },
      { taskQueue },
    );
    return { handle, result: await waitForAgentRun(handle) };
  });
  return { result, calls, handle };
}

describe('an agent run on the real dev server', () => {
  test('completes on regular activities, and its history shows activity types named after the tools', async () => {
    // Regular activities: on the fast path (the default) the calls are markers (docs/fast-path.md).
    const { result, handle, calls } = await runScript(
      'complete',
      [
        { toolCalls: [{ name: 'add', arguments: '{"a":2,"b":40}' }] },
        { toolCalls: [{ name: 'set_mode', arguments: { mode: 'safe' } }] },
        { text: 'The sum is 42.', final: true },
      ],
      { fastPath: false },
    );
    expect(result.status).toBe('completed');
    expect(result.answer).toBe('The sum is 42.');
    expect(result.steps.map((s) => [s.tool, s.status])).toEqual([
      ['add', 'succeeded'],
      ['set_mode', 'succeeded'],
    ]);
    expect(result.steps[0]?.observation).toEqual({ status: 'ok', output: { sum: 42 } });
    const runKey = `${handle.workflowId}/${handle.firstExecutionRunId}`;
    expect(calls.map((c) => c.idempotencyKey)).toEqual([`${runKey}/1`, `${runKey}/2`]);

    const history = await handle.fetchHistory();
    const activityTypes = (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter((n): n is string => typeof n === 'string');
    expect(activityTypes).toEqual(expect.arrayContaining(['describeTools', 'callModel', 'add', 'set_mode']));
  });

  test('completes on the default (the fast path), each call keyed by its run and step', async () => {
    const { result, handle, calls } = await runScript('complete-default', [
      { toolCalls: [{ name: 'add', arguments: '{"a":2,"b":40}' }] },
      { toolCalls: [{ name: 'set_mode', arguments: { mode: 'safe' } }] },
      { text: 'The sum is 42.', final: true },
    ]);
    expect(result).toMatchObject({ status: 'completed', answer: 'The sum is 42.' });
    expect(result.steps.map((s) => [s.tool, s.status])).toEqual([
      ['add', 'succeeded'],
      ['set_mode', 'succeeded'],
    ]);
    const runKey = `${handle.workflowId}/${handle.firstExecutionRunId}`;
    expect(calls.map((c) => c.idempotencyKey)).toEqual([`${runKey}/1`, `${runKey}/2`]);
  });

  test('gives each tool activity a summary naming the tool and its arguments', async () => {
    const { handle } = await runScript(
      'summary',
      [{ toolCalls: [{ name: 'add', arguments: '{"a":1,"b":1}' }] }, { text: 'done', final: true }],
      { fastPath: false },
    );
    const history = await handle.fetchHistory();
    const scheduled = (history.events ?? []).find(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'add',
    );
    const summary = scheduled?.userMetadata?.summary?.data;
    expect(JSON.parse(Buffer.from(summary ?? []).toString('utf8'))).toBe('add {"a":1,"b":1}');
  });
});
