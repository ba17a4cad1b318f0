import {
  metrics,
  SpanKind,
  SpanStatusCode,
  type Attributes,
  type Histogram,
  type MeterProvider,
  type Span,
  type TracerProvider,
} from '@opentelemetry/api';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import {
  ERROR_TYPE_OTHER,
  GEN_AI_ATTRIBUTES as GEN_AI,
  GEN_AI_DURATION_BUCKETS_S,
  GEN_AI_METRICS,
  GEN_AI_OPERATIONS,
  GEN_AI_TOKEN_TYPES,
  GEN_AI_TOKEN_USAGE_BUCKETS,
  genAiProviderName,
} from '../contract/gen-ai-conventions';
import type { ModelSettings, ModelTurn } from '../contract/model-types';
import { DURABLE_TOOLS_METER } from './engine-metrics';

/** The GenAI client metrics of the engine's model calls (semantic conventions v1.41; docs/telemetry.md). */
export interface GenAiClientMetrics {
  /** `gen_ai.client.token.usage`: input and output tokens of each model call. */
  tokenUsage: Histogram;
  /** `gen_ai.client.operation.duration`: seconds each model call took. */
  operationDuration: Histogram;
}

/**
 * Creates the GenAI client metrics on a meter provider (default: the global one, a no-op until an SDK registers
 * one), with the bucket boundaries the convention gives them.
 */
export function createGenAiClientMetrics(provider: MeterProvider = metrics.getMeterProvider()): GenAiClientMetrics {
  const meter = provider.getMeter(DURABLE_TOOLS_METER);
  return {
    tokenUsage: meter.createHistogram(GEN_AI_METRICS.tokenUsage, {
      unit: '{token}',
      description: 'Number of input and output tokens used.',
      advice: { explicitBucketBoundaries: [...GEN_AI_TOKEN_USAGE_BUCKETS] },
    }),
    operationDuration: meter.createHistogram(GEN_AI_METRICS.operationDuration, {
      unit: 's',
      description: 'GenAI operation duration.',
      advice: { explicitBucketBoundaries: [...GEN_AI_DURATION_BUCKETS_S] },
    }),
  };
}

/** What {@link tracedModelCall} records with: the metrics always, spans when the worker traces. */
export interface ModelCallTelemetry {
  metrics: GenAiClientMetrics;
  /** The worker's tracer provider when it traces (no `chat` span without one). */
  tracerProvider?: TracerProvider;
}

/** The tracer name of the engine's worker-side spans. */
const TRACER_NAME = 'durable-tools';

/**
 * Runs one call of a model provider (one attempt of a turn) as a GenAI `chat` operation: inside a `chat <model>`
 * client span (a child of the attempt's `RunActivity:callModel`) when the worker traces, and into the GenAI client
 * metrics. Request settings are recorded, never the prompt, the transcript or the answer.
 */
export function tracedModelCall(
  telemetry: ModelCallTelemetry,
  settings: ModelSettings,
  call: () => Promise<ModelTurn>,
): Promise<ModelTurn> {
  const common = commonAttributes(settings);
  const startedAt = performance.now();
  const record = (span: Span | undefined, turn: ModelTurn | undefined, error?: unknown): void => {
    const seconds = (performance.now() - startedAt) / 1000;
    const response = turn?.modelId !== undefined ? { [GEN_AI.responseModel]: turn.modelId } : {};
    const failure = error === undefined ? {} : { [GEN_AI.errorType]: errorTypeOf(error) };
    telemetry.metrics.operationDuration.record(seconds, { ...common, ...response, ...failure });
    if (turn) recordTokens(telemetry.metrics, turn, { ...common, ...response });
    if (!span) return;
    span.setAttributes({ ...response, ...failure, ...(turn ? turnAttributes(turn) : {}) });
    if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: String(failure[GEN_AI.errorType]) });
    span.end();
  };
  const tracer = telemetry.tracerProvider?.getTracer(TRACER_NAME);
  if (!tracer) return settle(undefined, call, record);
  const model = typeof settings.model === 'string' ? settings.model : undefined;
  const name = model ? `${GEN_AI_OPERATIONS.chat} ${model.slice(0, 128)}` : GEN_AI_OPERATIONS.chat;
  const attributes = { ...common, ...requestAttributes(settings) };
  return tracer.startActiveSpan(name, { kind: SpanKind.CLIENT, attributes }, (span) => settle(span, call, record));
}

async function settle(
  span: Span | undefined,
  call: () => Promise<ModelTurn>,
  record: (span: Span | undefined, turn: ModelTurn | undefined, error?: unknown) => void,
): Promise<ModelTurn> {
  let turn: ModelTurn;
  try {
    turn = await call();
  } catch (error) {
    record(span, undefined, error);
    throw error;
  }
  record(span, turn);
  return turn;
}

/** The attributes the convention requires (or asks for when known) on every chat span and metric point. */
function commonAttributes(settings: ModelSettings): Attributes {
  return {
    [GEN_AI.operationName]: GEN_AI_OPERATIONS.chat,
    [GEN_AI.providerName]: genAiProviderName(String(settings.provider)),
    ...(typeof settings.model === 'string' ? { [GEN_AI.requestModel]: settings.model } : {}),
  };
}

/** The request's sampling settings the convention names, as the run set them. */
function requestAttributes(settings: ModelSettings): Attributes {
  const numbers: Array<[string, unknown]> = [
    [GEN_AI.requestTemperature, settings.temperature],
    [GEN_AI.requestMaxTokens, settings.maxOutputTokens],
    [GEN_AI.requestTopP, settings.topP],
    [GEN_AI.requestTopK, settings.topK],
    [GEN_AI.requestSeed, settings.seed],
  ];
  const attributes: Attributes = {};
  for (const [name, value] of numbers)
    if (typeof value === 'number' && Number.isFinite(value)) attributes[name] = value;
  return attributes;
}

/** What the answered turn tells: its finish reason and token counts (when the provider reported them). */
function turnAttributes(turn: ModelTurn): Attributes {
  const { usage } = turn;
  return {
    ...(turn.finishReason !== undefined ? { [GEN_AI.responseFinishReasons]: [turn.finishReason] } : {}),
    ...(usage?.inputTokens !== undefined ? { [GEN_AI.usageInputTokens]: usage.inputTokens } : {}),
    ...(usage?.outputTokens !== undefined ? { [GEN_AI.usageOutputTokens]: usage.outputTokens } : {}),
  };
}

/** Token counts go to `gen_ai.client.token.usage` only when the provider reported them (the convention's rule). */
function recordTokens(metrics: GenAiClientMetrics, turn: ModelTurn, attributes: Attributes): void {
  const { usage } = turn;
  if (usage?.inputTokens !== undefined) {
    metrics.tokenUsage.record(usage.inputTokens, { ...attributes, [GEN_AI.tokenType]: GEN_AI_TOKEN_TYPES.input });
  }
  if (usage?.outputTokens !== undefined) {
    metrics.tokenUsage.record(usage.outputTokens, { ...attributes, [GEN_AI.tokenType]: GEN_AI_TOKEN_TYPES.output });
  }
}

/** `error.type` of a failed model call: the engine's failure type (`MODEL_RATE_LIMITED`, `MODEL_TIMEOUT`...). */
function errorTypeOf(error: unknown): string {
  if (error instanceof ApplicationFailure && error.type) return error.type;
  if (error instanceof CancelledFailure) return 'cancelled';
  return ERROR_TYPE_OTHER;
}
