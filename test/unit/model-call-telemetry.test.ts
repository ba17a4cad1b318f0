import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { createModelActivities } from '../../src/activities/model-activities';
import {
  GEN_AI_ATTRIBUTES as GEN_AI,
  GEN_AI_DURATION_BUCKETS_S,
  GEN_AI_METRICS,
  GEN_AI_TOKEN_USAGE_BUCKETS,
} from '../../src/contract/gen-ai-conventions';
import type { ModelProvider, ModelSettings, ModelTurn } from '../../src/contract/model-types';
import { createToolRegistry } from '../../src/tools/tool-registry';
import { inMemoryMetrics, inMemoryTracing } from '../support/in-memory-telemetry';

/**
 * Issue 50: each provider call of the model activity is a GenAI `chat` operation — a client span under the
 * attempt's span, and the GenAI client metrics — read back through a real OpenTelemetry SDK's in-memory exporter
 * and metric reader.
 */

const answered: ModelTurn = {
  text: 'Booked.',
  toolCalls: [],
  done: true,
  usage: { inputTokens: 1200, outputTokens: 80 },
  modelId: 'gpt-4o-2024-08-06',
  finishReason: 'stop',
};

const settings: ModelSettings = { provider: 'openai', model: 'gpt-4o', temperature: 0.2, maxOutputTokens: 500 };

function setup(provider: ModelProvider, options: { traced?: boolean } = {}) {
  const tracing = inMemoryTracing();
  const metrics = inMemoryMetrics();
  const { callModel } = createModelActivities({
    registry: createToolRegistry([]),
    providers: { openai: provider },
    meterProvider: metrics.meterProvider,
    ...(options.traced === false ? {} : { tracerProvider: tracing.tracerProvider }),
  });
  const call = (overrides: Partial<ModelSettings> = {}) =>
    callModel({
      runKey: `run-${Math.random()}`,
      goal: 'Book a hotel for the card 4111 1111 1111 1111',
      settings: { ...settings, ...overrides },
      turn: 0,
      fromIndex: 0,
      messages: [{ role: 'user', content: 'Book a hotel for the card 4111 1111 1111 1111' }],
    });
  const chat = () => {
    const spans = tracing.spans();
    if (spans.length !== 1) throw new Error(`expected one span, found ${spans.length}`);
    return spans[0]!;
  };
  return { call, chat, tracing, metrics };
}

const declinedKey = async (): Promise<ModelTurn> => {
  throw Object.assign(new Error('Incorrect API key provided: sk-live-abc123'), { statusCode: 401 });
};

afterEach(() => trace.disable());

describe('the chat span of a model call', () => {
  test('is a client span named after the operation and the requested model', async () => {
    const { call, chat } = setup(async () => answered);
    await call();
    expect(chat().name).toBe('chat gpt-4o');
    expect(chat().kind).toBe(SpanKind.CLIENT);
  });

  test('is named just chat when the run names no model', async () => {
    const { call, chat } = setup(async () => answered);
    await call({ model: undefined });
    expect(chat().name).toBe('chat');
  });

  test('carries the operation, the provider and the request settings', async () => {
    const { call, chat } = setup(async () => answered);
    await call();
    expect(chat().attributes).toMatchObject({
      [GEN_AI.operationName]: 'chat',
      [GEN_AI.providerName]: 'openai',
      [GEN_AI.requestModel]: 'gpt-4o',
      [GEN_AI.requestTemperature]: 0.2,
      [GEN_AI.requestMaxTokens]: 500,
    });
  });

  test('carries the model that answered, the tokens it reported and why it stopped', async () => {
    const { call, chat } = setup(async () => answered);
    await call();
    expect(chat().attributes).toMatchObject({
      [GEN_AI.responseModel]: 'gpt-4o-2024-08-06',
      [GEN_AI.usageInputTokens]: 1200,
      [GEN_AI.usageOutputTokens]: 80,
      [GEN_AI.responseFinishReasons]: ['stop'],
    });
  });

  test("is a child of the span active when the call starts (the attempt's RunActivity:callModel)", async () => {
    const { call, tracing } = setup(async () => answered);
    const attempt = tracing.tracerProvider.getTracer('test').startSpan('RunActivity:callModel');
    await context.with(trace.setSpan(context.active(), attempt), () => call());
    const chat = tracing.spans().find((span) => span.name === 'chat gpt-4o');
    expect(chat?.parentSpanId).toBe(attempt.spanContext().spanId);
  });

  test('of a failed call has status ERROR and the failure type as error.type', async () => {
    const { call, chat } = setup(declinedKey);
    await expect(call()).rejects.toMatchObject({ type: 'MODEL_AUTHENTICATION_FAILED' });
    expect(chat().status).toEqual({ code: SpanStatusCode.ERROR, message: 'MODEL_AUTHENTICATION_FAILED' });
    expect(chat().attributes[GEN_AI.errorType]).toBe('MODEL_AUTHENTICATION_FAILED');
  });

  test("holds neither the prompt nor the provider's error text (which may quote a key)", async () => {
    const { call, tracing } = setup(declinedKey);
    await expect(call()).rejects.toBeDefined();
    const [span] = tracing.spans();
    const text = JSON.stringify({ attributes: span?.attributes, status: span?.status, events: span?.events });
    expect(text).not.toContain('4111');
    expect(text).not.toContain('sk-live');
  });

  test('is not created when the worker does not trace', async () => {
    const { call, tracing } = setup(async () => answered, { traced: false });
    await call();
    expect(tracing.spans()).toEqual([]);
  });
});

describe('the GenAI client metrics of model calls', () => {
  test('gen_ai.client.token.usage records the input and the output tokens of a call, by gen_ai.token.type', async () => {
    const { call, metrics } = setup(async () => answered);
    await call();
    const points = await metrics.points(GEN_AI_METRICS.tokenUsage);
    const byType = Object.fromEntries(points.map((p) => [p.attributes[GEN_AI.tokenType], p.value]));
    expect(byType).toEqual({ input: 1200, output: 80 });
    expect(points[0]?.attributes).toMatchObject({
      [GEN_AI.operationName]: 'chat',
      [GEN_AI.providerName]: 'openai',
      [GEN_AI.requestModel]: 'gpt-4o',
      [GEN_AI.responseModel]: 'gpt-4o-2024-08-06',
    });
  });

  test("gen_ai.client.token.usage uses the convention's unit and bucket boundaries", async () => {
    const { call, metrics } = setup(async () => answered);
    await call();
    const [point] = await metrics.points(GEN_AI_METRICS.tokenUsage);
    expect(point?.unit).toBe('{token}');
    expect(point?.boundaries).toEqual(GEN_AI_TOKEN_USAGE_BUCKETS);
  });

  test('gen_ai.client.token.usage records nothing for a turn whose provider reported no tokens', async () => {
    const { call, metrics } = setup(async () => ({ ...answered, usage: undefined }) as unknown as ModelTurn);
    await call();
    expect(await metrics.points(GEN_AI_METRICS.tokenUsage)).toEqual([]);
  });

  test('gen_ai.client.operation.duration records each call in seconds', async () => {
    const { call, metrics } = setup(async () => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      return answered;
    });
    await call();
    const [point] = await metrics.points(GEN_AI_METRICS.operationDuration);
    expect(point?.count).toBe(1);
    expect(point?.unit).toBe('s');
    // At least the provider's 30 ms, and in seconds (a value in milliseconds would be at least 30).
    expect(point?.value).toBeGreaterThanOrEqual(0.025);
    expect(point?.value).toBeLessThan(30);
  });

  test("gen_ai.client.operation.duration uses the convention's bucket boundaries", async () => {
    const { call, metrics } = setup(async () => answered);
    await call();
    const [point] = await metrics.points(GEN_AI_METRICS.operationDuration);
    expect(point?.boundaries).toEqual(GEN_AI_DURATION_BUCKETS_S);
  });

  test('gen_ai.client.operation.duration of a failed call carries error.type', async () => {
    const { call, metrics } = setup(declinedKey);
    await expect(call()).rejects.toBeDefined();
    const [point] = await metrics.points(GEN_AI_METRICS.operationDuration);
    expect(point?.attributes[GEN_AI.errorType]).toBe('MODEL_AUTHENTICATION_FAILED');
  });
});
