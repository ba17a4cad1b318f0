import { z } from 'zod';
import { defineTool } from '../../src/tools/define-tool';
import { createRecordingTools } from '../support/test-tools';
import { useTestTemporal, createTestWorker, uniqueTaskQueue } from '../support/temporal-test-env';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import type { ModelProvider, ModelRequest, ModelTurn } from '../../src/contract/model-types';
import type { ToolErrorObservation } from '../../src/contract/activity-protocol';

const temporal = useTestTemporal();

/** Runs one bad call followed by a final answer; returns the step's observation and the calls that ran. */
async function runOneCall(name: string, call: { name: string; arguments: unknown }, allowedTools?: string[]) {
  const { tools, calls } = createRecordingTools();
  const taskQueue = uniqueTaskQueue(name);
  const worker = await createTestWorker(temporal, { tools, taskQueue });
  const script: ScriptedTurn[] = [{ toolCalls: [call] }, { text: 'giving up', final: true }];
  const result = await worker.runUntil(async () =>
    waitForAgentRun(
      await startAgentRun(
        temporal.client,
        { goal: name, model: { provider: 'scripted', script }, ...(allowedTools ? { allowedTools } : {}) },
        { taskQueue },
      ),
    ),
  );
  expect(result.status).toBe('completed');
  expect(result.steps).toHaveLength(1);
  return { observation: result.steps[0]?.observation as ToolErrorObservation, step: result.steps[0], calls };
}

describe('malformed tool calls from the model', () => {
  test('a broken JSON string becomes INVALID_ARGUMENTS and the implementation never runs', async () => {
    const { observation, calls } = await runOneCall('broken-json', { name: 'add', arguments: '{"a": 2, "b": 40,' });
    expect(observation).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS', retryable: false });
    expect(observation.message).toMatch(/not valid JSON/);
    expect(observation.hint).toMatch(/JSON object/);
    expect(calls).toEqual([]);
  });

  test('type drift ("10" for 10) becomes INVALID_ARGUMENTS with a hint and the implementation never runs', async () => {
    const { observation, calls } = await runOneCall('type-drift', { name: 'add', arguments: '{"a":"10","b":5}' });
    expect(observation).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' });
    expect(observation.hint).toContain('`a` must be a number, not a string: write 10 without quotes');
    expect(calls).toEqual([]);
  });

  test('an enum value that does not exist becomes INVALID_ARGUMENTS listing the allowed values', async () => {
    const { observation, calls } = await runOneCall('enum', { name: 'set_mode', arguments: { mode: 'turbo' } });
    expect(observation).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' });
    expect(observation.hint).toContain('`mode` must be one of "fast", "safe"; got "turbo"');
    expect(calls).toEqual([]);
  });

  test('an invented field becomes INVALID_ARGUMENTS naming the field and the implementation never runs', async () => {
    const { observation, calls } = await runOneCall('invented', { name: 'add', arguments: { a: 1, b: 2, c: 3 } });
    expect(observation).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' });
    expect(observation.hint).toContain('remove the unknown field `c`');
    expect(calls).toEqual([]);
  });

  test('an unknown tool name is refused without scheduling any tool activity', async () => {
    const { tools, calls } = createRecordingTools();
    const taskQueue = uniqueTaskQueue('unknown-tool');
    const worker = await createTestWorker(temporal, { tools, taskQueue });
    const script: ScriptedTurn[] = [
      { toolCalls: [{ name: 'delete_everything', arguments: '{}' }] },
      { text: 'ok', final: true },
    ];
    const { result, history } = await worker.runUntil(async () => {
      const handle = await startAgentRun(
        temporal.client,
        { goal: 'x', model: { provider: 'scripted', script } },
        { taskQueue },
      );
      return { result: await waitForAgentRun(handle), history: await handle.fetchHistory() };
    });
    expect(result.steps[0]?.observation).toMatchObject({ status: 'error', code: 'UNKNOWN_TOOL', attempts: 0 });
    expect((result.steps[0]?.observation as ToolErrorObservation).hint).toContain('add, set_mode');
    const scheduled = (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter(Boolean);
    expect(scheduled).not.toContain('delete_everything');
    expect(calls).toEqual([]);
  });

  test("a tool outside the run's allowed tools is refused like an unknown tool", async () => {
    const { observation, calls } = await runOneCall('not-allowed', { name: 'set_mode', arguments: { mode: 'fast' } }, [
      'add',
    ]);
    expect(observation).toMatchObject({ code: 'UNKNOWN_TOOL' });
    expect(calls).toEqual([]);
  });

  test('a tool name that is not a string is refused and the run still completes', async () => {
    const { observation, calls } = await runOneCall('non-string-name', {
      name: 42 as unknown as string,
      arguments: {},
    });
    expect(observation).toMatchObject({ code: 'UNKNOWN_TOOL' });
    expect(calls).toEqual([]);
  });
});

/** A value JSON cannot carry inside an otherwise ordinary one-call turn. */
function turnCalling(name: unknown, args: unknown): ModelTurn {
  return { toolCalls: [{ id: 'bad_1', name: name as string, arguments: args }], done: false };
}

const CYCLE: Record<string, unknown> = { a: 2 };
CYCLE['b'] = CYCLE;

describe('a custom provider returning what JSON cannot carry, on the real server', () => {
  const LATER_TURNS: ModelTurn[] = [
    { toolCalls: [{ id: 'good_1', name: 'add', arguments: { a: 2, b: 40 } }], done: false },
    { text: 'The sum is 42.', toolCalls: [], done: true },
  ];

  test.each([
    ['a symbol as tool name', () => turnCalling(Symbol('add'), { a: 1, b: 1 })],
    ['a BigInt in the arguments', () => turnCalling('add', { a: 1n, b: 1 })],
    ['a function as arguments', () => turnCalling('add', () => ({ a: 1, b: 1 }))],
    ['a cycle in the arguments', () => turnCalling('add', CYCLE)],
    ['undefined inside an array of the arguments', () => turnCalling('add', { a: 1, b: 1, list: [undefined] })],
    ['a Map as arguments', () => turnCalling('add', new Map([['a', 1]]))],
  ])(
    '%s is a MODEL_OUTPUT_NOT_JSON turn the model reads; no tool runs for it and the run ends as the later turns say',
    async (name, hostileTurn) => {
      const { tools, calls } = createRecordingTools();
      const requests: ModelRequest[] = [];
      const provider: ModelProvider = async (request) => {
        requests.push(request);
        return request.turn === 0 ? hostileTurn() : LATER_TURNS[request.turn - 1]!;
      };
      const taskQueue = uniqueTaskQueue(`not-json-${name.split(' ').slice(0, 3).join('-')}`);
      const worker = await createTestWorker(temporal, { tools, taskQueue, modelProviders: { odd: provider } });
      const result = await worker.runUntil(async () =>
        waitForAgentRun(
          await startAgentRun(temporal.client, { goal: name, model: { provider: 'odd' } }, { taskQueue }),
        ),
      );
      expect(result.status).toBe('completed');
      expect(result.answer).toBe('The sum is 42.');
      expect(result.steps).toHaveLength(1);
      expect(calls.map((call) => [call.tool, call.input])).toEqual([['add', { a: 2, b: 40 }]]);
      // One model call per turn: the bad turn was not retried as a failure.
      expect(requests.map((request) => request.turn)).toEqual([0, 1, 2]);
      const told = requests[1]?.transcript.at(-1);
      expect(told?.role === 'user' ? told.content : '').toContain('MODEL_OUTPUT_NOT_JSON');
    },
  );
});

describe('objects a tool receives from the guard, on the real server', () => {
  test('nested objects under z.any(), z.unknown() and a loose object are ordinary, whatever their keys', async () => {
    const echo = defineTool({
      name: 'describe_data',
      description: 'Describes what it was given.',
      input: z.looseObject({ data: z.any(), more: z.unknown() }),
      output: z.object({ text: z.string(), ordinary: z.boolean(), keys: z.array(z.string()) }),
      effect: 'read-only',
      idempotent: true,
    }).implement(async (input) => {
      const values = [input.data, input.more, (input as Record<string, unknown>)['extra']] as object[];
      return {
        text: `${String(input.data)} ${values.map((value) => JSON.stringify(value)).join(' ')}`,
        ordinary: values.every((value) => Object.getPrototypeOf(value) === Object.prototype),
        keys: Object.keys(input.data as object),
      };
    });
    const taskQueue = uniqueTaskQueue('ordinary-objects');
    const worker = await createTestWorker(temporal, { tools: [echo], taskQueue });
    const args =
      '{"data":{"a":1,"nested":{"b":2}},"more":{"toString":"t","valueOf":1,"constructor":{}},"extra":{"hasOwnProperty":true}}';
    const script: ScriptedTurn[] = [
      { toolCalls: [{ name: 'describe_data', arguments: args }] },
      { text: 'described', final: true },
    ];
    const result = await worker.runUntil(async () =>
      waitForAgentRun(
        await startAgentRun(
          temporal.client,
          { goal: 'describe', model: { provider: 'scripted', script } },
          { taskQueue },
        ),
      ),
    );
    expect(result.status).toBe('completed');
    expect(result.steps[0]?.observation).toEqual({
      status: 'ok',
      output: {
        text: '[object Object] {"a":1,"nested":{"b":2}} {"toString":"t","valueOf":1,"constructor":{}} {"hasOwnProperty":true}',
        ordinary: true,
        keys: ['a', 'nested'],
      },
    });
  });
});
