/**
 * The real AI SDK provider packages (`@ai-sdk/openai`, `@ai-sdk/anthropic`, `@ai-sdk/openai-compatible`)
 * talk over HTTP to a local server speaking the OpenAI Chat Completions and Anthropic Messages wire
 * formats, inside agent runs on the real dev server. `npm test` runs this file with the AI SDK 6 line on
 * Node 20; `npm run test:node22` runs it with the AI SDK 7 line on Node 22 (jest.node22.config.js).
 */
import type { WorkflowHandle } from '@temporalio/client';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { createConfiguredModelProvider, type ModelProviderKind } from '../../src/model/configured-model-providers';
import type { ModelProvider, ModelSettings } from '../../src/contract/model-types';
import type { Tool } from '../../src/tools/define-tool';
import type { AgentRunInput, AgentRunState } from '../../src/contract/agent-run-types';
import { tripScript } from '../../examples/trip-script';
import { tools as tripTools } from '../../examples/trip-tools';
import {
  FAKE_USAGE,
  offeredTools,
  scriptResponder,
  startFakeModelServer,
  type FakeModelServer,
} from '../support/fake-model-server';
import { createRecordingTools } from '../support/test-tools';
import { useTestTemporal, createTestWorker, uniqueTaskQueue } from '../support/temporal-test-env';

/** These tests are about providers: the demo's `pay` (approval by default) runs without a human. */
const NO_HUMAN_IN_THE_LOOP = { tools: { pay: 'never' } } as const;

const temporal = useTestTemporal();
let server: FakeModelServer;
beforeEach(async () => {
  server = await startFakeModelServer();
});
afterEach(async () => {
  await server.close();
});

const GOAL = 'Book me a trip from Lisbon to Berlin on 18 December for two, 3 nights, and pay for it.';

async function providerFor(kind: ModelProviderKind): Promise<ModelProvider> {
  return createConfiguredModelProvider({ kind, baseURL: server.baseURL, apiKey: 'test-key', model: 'test-model' });
}

/** Runs one agent run on a fresh worker whose only real model is `kind`, against the fake server. */
async function run(
  name: string,
  kind: ModelProviderKind,
  input: Omit<AgentRunInput, 'goal' | 'model'> & { model?: Partial<ModelSettings> } = {},
  tools: readonly Tool[] = createRecordingTools().tools,
): Promise<{ result: AgentRunState; handle: WorkflowHandle }> {
  const taskQueue = uniqueTaskQueue(name);
  const worker = await createTestWorker(temporal, {
    tools,
    taskQueue,
    modelProviders: { [kind]: await providerFor(kind) },
    approvals: { allowRunsToWaive: true },
  });
  return worker.runUntil(async () => {
    const handle = await startAgentRun(
      temporal.client,
      { goal: name, approval: NO_HUMAN_IN_THE_LOOP, ...input, model: { provider: kind, ...input.model } },
      { taskQueue },
    );
    return { result: await waitForAgentRun(handle), handle };
  });
}

/**
 * The failures of the model turn's attempts recorded in the history (the last attempt's): a regular activity's
 * (`callModel`), or on the fast path (the default) a local activity's marker (`callModelOnce`, a fused step), whose
 * failure is the activity's own or wraps it as its cause.
 */
async function modelFailures(handle: WorkflowHandle) {
  const history = await handle.fetchHistory();
  return (history.events ?? [])
    .map((event) => {
      const failure = event.activityTaskFailedEventAttributes?.failure ?? event.markerRecordedEventAttributes?.failure;
      return failure && !failure.applicationFailureInfo && failure.cause ? failure.cause : failure;
    })
    .filter((failure): failure is NonNullable<typeof failure> => failure != null);
}

function parsed(value: unknown): unknown {
  return typeof value === 'string' ? JSON.parse(value) : value;
}

/** The AI SDK line under test: the global `DT_AI_SDK_LINE` of the jest project (jest.node22.config.js), else 6. */
const AI_SDK_LINE = (globalThis as { DT_AI_SDK_LINE?: string }).DT_AI_SDK_LINE === '7' ? 7 : 6;

/**
 * The content of a failed call's tool message as the OpenAI provider sends it: the observation itself with
 * AI SDK 6, wrapped in `{ error }` with AI SDK 7 (Chat Completions has no error flag; Anthropic's `is_error` and
 * the OpenAI-compatible provider keep the observation as it is on both lines).
 */
function openAiErrorContent(observation: Record<string, unknown>): Record<string, unknown> {
  return AI_SDK_LINE === 7 ? { error: observation } : observation;
}

describe(`AI SDK ${AI_SDK_LINE} providers over HTTP`, () => {
  test('the provider packages loaded are those of the line under test', async () => {
    const spec = AI_SDK_LINE === 7 ? 'v4' : 'v3';
    const { createOpenAI } = await import('@ai-sdk/openai');
    const { createAnthropic } = await import('@ai-sdk/anthropic');
    const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
    const models = [
      createOpenAI({ apiKey: 'k' }).chat('m'),
      createAnthropic({ apiKey: 'k' }).messages('m'),
      createOpenAICompatible({ name: 'c', baseURL: server.baseURL }).chatModel('m'),
    ];
    expect(models.map((model) => model.specificationVersion)).toEqual([spec, spec, spec]);
  });

  test('a run against the OpenAI-compatible server books the demo trip with the same tool calls as the scripted demo', async () => {
    server.respond(scriptResponder(tripScript));
    const scriptedQueue = uniqueTaskQueue('trip-scripted');
    const scriptedWorker = await createTestWorker(temporal, {
      tools: tripTools,
      taskQueue: scriptedQueue,
      approvals: { allowRunsToWaive: true },
    });
    // Side by side: the scripted demo and the same trip with the model behind HTTP.
    const [scripted, { result }] = await Promise.all([
      scriptedWorker.runUntil(async () =>
        waitForAgentRun(
          await startAgentRun(
            temporal.client,
            { goal: GOAL, approval: NO_HUMAN_IN_THE_LOOP, model: { provider: 'scripted', script: tripScript } },
            {
              taskQueue: scriptedQueue,
            },
          ),
        ),
      ),
      run(GOAL, 'openai-compatible', {}, tripTools),
    ]);

    expect(scripted.status).toBe('completed');
    expect(result.status).toBe('completed');
    const calls = (state: AgentRunState) => state.steps.map((s) => [s.tool, parsed(s.arguments), s.status]);
    expect(calls(result)).toEqual(calls(scripted));
    expect(calls(result).map(([tool]) => tool)).toEqual([
      'search_flights',
      'book_flight',
      'book_flight',
      'book_hotel',
      'pay',
    ]);
    expect(result.answer).toBe(scripted.answer);
    expect(server.requests).toHaveLength(tripScript.length);
    expect(server.requests.every((request) => request.body.model === 'test-model')).toBe(true);
  });

  test('tool results go back to an OpenAI model paired with their tool-call ids, and its text is the answer', async () => {
    server.enqueue(
      { kind: 'turn', text: 'Adding.', toolCalls: [{ name: 'add', arguments: '{"a":2,"b":40}' }] },
      { kind: 'turn', text: 'The sum is 42.' },
    );
    const { result } = await run('openai-roundtrip', 'openai');
    expect(result.status).toBe('completed');
    expect(result.answer).toBe('The sum is 42.');
    expect(result.steps[0]).toMatchObject({ tool: 'add', toolCallId: 'call_1_1', arguments: { a: 2, b: 40 } });
    const messages = server.requests[1]?.body.messages as Array<Record<string, unknown>>;
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(messages[2]).toMatchObject({
      content: 'Adding.',
      tool_calls: [{ id: 'call_1_1', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":40}' } }],
    });
    expect(messages[3]).toMatchObject({ tool_call_id: 'call_1_1' });
    expect(JSON.parse(String(messages[3]?.content))).toEqual({ status: 'ok', output: { sum: 42 } });
    expect(offeredTools(server.requests[0]!)).toEqual(expect.arrayContaining(['add', 'set_mode', 'create_order']));
  });

  test('parallel tool calls of one turn become separate steps whose results return together, matched by id', async () => {
    server.enqueue(
      {
        kind: 'turn',
        toolCalls: [
          { name: 'add', arguments: '{"a":1,"b":2}' },
          { name: 'add', arguments: '{"a":"3","b":4}' },
        ],
      },
      { kind: 'turn', text: 'Done.' },
    );
    const { result } = await run('openai-parallel', 'openai', { parallelToolCalls: true });
    expect(result.status).toBe('completed');
    expect(result.steps.map((s) => [s.toolCallId, s.status])).toEqual([
      ['call_1_1', 'succeeded'],
      ['call_1_2', 'failed'],
    ]);
    // The second call's raw arguments reached the guard untouched and were refused there.
    expect(result.steps[1]?.observation).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' });
    const messages = server.requests[1]?.body.messages as Array<Record<string, unknown>>;
    const toolMessages = messages.filter((m) => m.role === 'tool');
    expect(toolMessages.map((m) => m.tool_call_id)).toEqual(['call_1_1', 'call_1_2']);
    expect(JSON.parse(String(toolMessages[1]?.content))).toMatchObject(
      openAiErrorContent({ status: 'error', code: 'INVALID_ARGUMENTS' }),
    );
  });

  test('the Anthropic provider maps tool_use and tool_result both ways', async () => {
    server.enqueue(
      { kind: 'turn', text: 'Adding.', toolCalls: [{ name: 'add', arguments: '{"a":5,"b":6}' }] },
      { kind: 'turn', text: 'It is 11.' },
    );
    const { result } = await run('anthropic-roundtrip', 'anthropic');
    expect(result.status).toBe('completed');
    expect(result.answer).toBe('It is 11.');
    expect(result.steps[0]).toMatchObject({ tool: 'add', toolCallId: 'toolu_1_1', status: 'succeeded' });
    const messages = server.requests[1]?.body.messages as Array<{
      role: string;
      content: Array<Record<string, unknown>>;
    }>;
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(messages[1]?.content).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'tool_use', id: 'toolu_1_1', input: { a: 5, b: 6 } })]),
    );
    expect(messages[2]?.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_1_1' });
    expect(server.requests[0]?.headers['x-api-key']).toBe('test-key');
  });

  test('a 429 with Retry-After is retried no earlier than the provider asked', async () => {
    server.enqueue(
      {
        kind: 'error',
        status: 429,
        headers: { 'retry-after': '2' },
        body: { error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } },
      },
      { kind: 'turn', text: 'Fine.' },
    );
    const { result } = await run('openai-429', 'openai');
    expect(result.status).toBe('completed');
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.at - server.requests[0]!.at).toBeGreaterThanOrEqual(2_000);
  });

  test('an overloaded Anthropic API (529) is retried and the run completes', async () => {
    server.enqueue(
      {
        kind: 'error',
        status: 529,
        body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      },
      { kind: 'turn', text: 'Fine.' },
    );
    const { result } = await run('anthropic-529', 'anthropic');
    expect(result.status).toBe('completed');
    expect(server.requests).toHaveLength(2);
  });

  test('a context-length error fails the run at once with the provider message and a hint, never retried', async () => {
    server.enqueue({
      kind: 'error',
      status: 400,
      body: {
        error: {
          message:
            "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens.",
          type: 'invalid_request_error',
          code: 'context_length_exceeded',
        },
      },
    });
    const { result, handle } = await run('openai-context-length', 'openai');
    expect(result.status).toBe('failed');
    expect(server.requests).toHaveLength(1);
    const [failure] = await modelFailures(handle);
    expect(failure?.applicationFailureInfo).toMatchObject({
      type: 'MODEL_CONTEXT_LENGTH_EXCEEDED',
      nonRetryable: true,
    });
    expect(failure?.message).toContain("This model's maximum context length is 8192 tokens");
    expect(failure?.message).toMatch(/larger context|toolDisclosure/);
  });

  test('a 401 is permanent, with a hint naming the API key variable', async () => {
    server.enqueue({
      kind: 'error',
      status: 401,
      body: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } },
    });
    const { result, handle } = await run('anthropic-401', 'anthropic');
    expect(result.status).toBe('failed');
    expect(server.requests).toHaveLength(1);
    const [failure] = await modelFailures(handle);
    expect(failure?.applicationFailureInfo).toMatchObject({ type: 'MODEL_AUTHENTICATION_FAILED', nonRetryable: true });
    expect(failure?.message).toContain('invalid x-api-key');
    expect(failure?.message).toContain('ANTHROPIC_API_KEY');
  });

  test('a hanging provider is aborted at the turn deadline and the run ends instead of running forever', async () => {
    server.respond(() => ({ kind: 'hang' }));
    const { result, handle } = await run('openai-hang', 'openai', { model: { turnTimeoutMs: 1_500, maxAttempts: 2 } });
    expect(result.status).toBe('failed');
    expect(server.requests).toHaveLength(2);
    // The activity's abort signal reached the HTTP request: the client closed each connection.
    await waitFor(() => server.requests.every((request) => request.aborted));
    const failures = await modelFailures(handle);
    expect(failures[0]?.applicationFailureInfo?.type).toBe('MODEL_TIMEOUT');
  });

  test('a refusal is an observation the model reads, never a completed answer', async () => {
    server.enqueue(
      { kind: 'turn', text: 'I cannot help with that.', finish: 'refusal' },
      { kind: 'turn', text: 'Here is the answer.' },
    );
    const { result } = await run('openai-refusal', 'openai');
    expect(result.status).toBe('completed');
    expect(result.answer).toBe('Here is the answer.');
    expect(result.usage.turns.map((t) => t.issue)).toEqual(['MODEL_REFUSED', undefined]);
    const messages = server.requests[1]?.body.messages as Array<{ role: string; content: unknown }>;
    expect(messages.at(-1)).toMatchObject({ role: 'user' });
    expect(JSON.stringify(messages.at(-1))).toContain('MODEL_REFUSED');
  });

  test('empty answers in a row end the run as failed, not completed', async () => {
    server.respond(() => ({ kind: 'turn' }));
    const { result } = await run('openai-empty', 'openai');
    expect(result.status).toBe('failed');
    expect(result.reason).toContain('MODEL_EMPTY_RESPONSE');
    expect(result.answer).toBeUndefined();
  });

  test('token usage of every turn is in the run state, and maxInputTokens ends the run under the failure policy', async () => {
    const { tools, calls } = createRecordingTools();
    server.enqueue(
      { kind: 'turn', toolCalls: [{ name: 'create_order', arguments: '{"item":"book","quantity":1}' }] },
      { kind: 'turn', toolCalls: [{ name: 'add', arguments: '{"a":1,"b":1}' }] },
      { kind: 'turn', text: 'never reached' },
    );
    const { result } = await run('usage-limit', 'openai', { limits: { maxInputTokens: 2 * FAKE_USAGE.input } }, tools);
    expect(result.usage.turns.map((t) => [t.turn, t.inputTokens, t.outputTokens, t.modelId])).toEqual([
      [1, FAKE_USAGE.input, FAKE_USAGE.output, 'test-model'],
      [2, FAKE_USAGE.input, FAKE_USAGE.output, 'test-model'],
    ]);
    expect(result.usage).toMatchObject({ inputTokens: 2 * FAKE_USAGE.input, outputTokens: 2 * FAKE_USAGE.output });
    expect(result.status).toBe('compensated');
    expect(result.reason).toContain(`limit of ${2 * FAKE_USAGE.input} input tokens`);
    // The turn over budget never ran its call; the order made before it was undone.
    expect(calls.map((c) => c.tool)).toEqual(['create_order', 'cancel_order']);
  });

  test('above the catalog budget the model sees names and describe_tools, and every call is still validated', async () => {
    const { tools, calls } = createRecordingTools();
    server.enqueue(
      { kind: 'turn', toolCalls: [{ name: 'describe_tools', arguments: '{"names":["add","cancel_order_x"]}' }] },
      { kind: 'turn', toolCalls: [{ name: 'add', arguments: '{"a":"1","b":2}' }] },
      { kind: 'turn', toolCalls: [{ name: 'add', arguments: '{"a":1,"b":2}' }] },
      { kind: 'turn', text: '3' },
    );
    const { result } = await run('disclosure', 'openai', { toolDisclosure: { maxTools: 2 } }, tools);
    expect(result.status).toBe('completed');
    expect(result.toolsDisclosedOnDemand).toBe(true);
    const offered = server.requests[0]!.body.tools as Array<{ function: { name: string; parameters: unknown } }>;
    expect(offered[0]?.function.name).toBe('describe_tools');
    const add = offered.find((tool) => tool.function.name === 'add');
    expect(add?.function.parameters).toEqual({ type: 'object', additionalProperties: true });
    expect(result.steps.map((s) => [s.tool, s.status])).toEqual([
      ['describe_tools', 'succeeded'],
      ['add', 'failed'],
      ['add', 'succeeded'],
    ]);
    expect(result.steps[0]?.observation).toMatchObject({
      status: 'ok',
      output: {
        tools: [{ name: 'add', inputSchema: expect.objectContaining({ required: ['a', 'b'] }) }],
        unknown: ['cancel_order_x'],
      },
    });
    expect(result.steps[1]?.observation).toMatchObject({ code: 'INVALID_ARGUMENTS' });
    expect(calls.map((c) => c.input)).toEqual([{ a: 1, b: 2 }]);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
