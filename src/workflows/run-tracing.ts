/**
 * The engine's own spans, created in the workflow sandbox. With the OpenTelemetry workflow interceptors in the
 * bundle (a worker created with `telemetry.tracing`) they are exported through the worker's sink, inside the
 * run's trace; without them the tracer is OpenTelemetry's no-op and nothing is recorded. Spans are never
 * commands: adding or removing them does not change a run's history.
 */
import {
  INVALID_SPAN_CONTEXT,
  isSpanContextValid,
  ProxyTracerProvider,
  SpanStatusCode,
  trace,
  type Link,
  type Span,
} from '@opentelemetry/api';
import type { ModelTurn } from '../contract/model-types';
import type { PendingCompensation, RunStatus, StepRecord } from '../contract/agent-run-types';
import { compensationKey } from './run-ownership';

/** Span names and attributes of the engine's workflow spans. */
export const RUN_SPANS = {
  /** One per model turn; parent of the `StartActivity:callModel` span. */
  modelTurn: 'model_turn',
  /** One per tool call of the model, named `execute_tool <tool>`; parent of `StartActivity:<tool>` (attempts below). */
  toolCall: 'execute_tool',
  /** One per compensation, named `compensate <undo tool>`, linked to the `execute_tool` span of the step it undoes. */
  compensation: 'compensate',
  attributes: {
    runStatus: 'durable_tools.run_status',
    turn: 'durable_tools.turn',
    toolCalls: 'durable_tools.tool_calls',
    tool: 'durable_tools.tool',
    toolCallId: 'durable_tools.tool_call_id',
    stepId: 'durable_tools.step_id',
    idempotencyKey: 'durable_tools.idempotency_key',
    stepStatus: 'durable_tools.step_status',
    attempts: 'durable_tools.attempts',
    errorCode: 'durable_tools.error_code',
    compensationOf: 'durable_tools.compensation_of',
  },
} as const;

const A = RUN_SPANS.attributes;

/** A tool name in a span name is cut here (the model may send any name). */
const SPAN_NAME_TOOL_CHARS = 64;

const tracer = () => trace.getTracer('durable-tools');

/** OpenTelemetry's no-op provider: what the global provider delegates to while nobody registered one. */
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();

/** The span a step gets when nothing traces the workflow: records nothing, as the no-op tracer's would. */
const UNTRACED_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * Whether a tracer provider is registered in the workflow sandbox (the OpenTelemetry workflow interceptors of a
 * traced worker register one). Without one, spans would be the no-op tracer's: the steps skip them, which saves
 * the promises and context switches of `startActiveSpan` on every step (each promise in the sandbox costs a
 * stack trace in the SDK's promise hook).
 */
export function tracing(): boolean {
  const provider = trace.getTracerProvider();
  const delegate = provider instanceof ProxyTracerProvider ? provider.getDelegate() : provider;
  return delegate !== NOOP_TRACER_PROVIDER;
}

/** Marks the run's span (Temporal's `RunWorkflow:agentRun`) with the status the run ends with. */
export function markRunStatus(status: RunStatus): void {
  trace.getActiveSpan()?.setAttribute(A.runStatus, status);
}

/** Runs one model turn inside its span. */
export function traceModelTurn(turnNumber: number, ask: () => Promise<ModelTurn>): Promise<ModelTurn> {
  if (!tracing()) return ask();
  return inSpan(RUN_SPANS.modelTurn, [], async (span) => {
    span.setAttribute(A.turn, turnNumber);
    const turn = await ask();
    span.setAttribute(A.toolCalls, Array.isArray(turn.toolCalls) ? turn.toolCalls.length : 0);
    return turn;
  });
}

/**
 * Runs one tool call of the model inside its span, then keeps the span's context on the call's pending
 * compensation (if it has one), so the compensation's span can link to it — in a later generation too.
 */
export function traceToolStep(
  tool: string,
  pending: readonly PendingCompensation[],
  run: () => Promise<StepRecord>,
): Promise<StepRecord> {
  if (!tracing()) return run();
  return inSpan(`${RUN_SPANS.toolCall} ${tool.slice(0, SPAN_NAME_TOOL_CHARS)}`, [], async (span) => {
    const step = await run();
    span.setAttributes({
      [A.tool]: step.tool,
      [A.toolCallId]: step.toolCallId,
      [A.stepId]: step.stepId,
      [A.idempotencyKey]: step.idempotencyKey,
      [A.stepStatus]: step.status,
      ...(step.attempts !== undefined ? { [A.attempts]: step.attempts } : {}),
      ...(step.observation?.status === 'error' ? { [A.errorCode]: step.observation.code } : {}),
    });
    const compensation = pending.find((item) => item.stepId === step.stepId);
    const { traceId, spanId, traceFlags } = span.spanContext();
    if (compensation && isSpanContextValid(span.spanContext())) compensation.span = { traceId, spanId, traceFlags };
    return step;
  });
}

/** Runs one compensation inside its span, linked to the span of the step it undoes. */
export function traceCompensation<T>(item: PendingCompensation, compensate: () => Promise<T>): Promise<T> {
  const links: Link[] = item.span ? [{ context: item.span, attributes: { [A.stepId]: item.stepId } }] : [];
  return inSpan(`${RUN_SPANS.compensation} ${item.undo}`, links, (span) => {
    span.setAttributes({
      [A.tool]: item.undo,
      [A.compensationOf]: item.tool,
      [A.stepId]: item.stepId,
      [A.idempotencyKey]: compensationKey(item.idempotencyKey),
    });
    return compensate();
  });
}

/** `fn` inside an active span that ends with it, marked as an error when it throws. */
function inSpan<T>(name: string, links: Link[], fn: (span: Span) => Promise<T>): Promise<T> {
  if (!tracing()) return fn(UNTRACED_SPAN);
  return tracer().startActiveSpan(name, { links }, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}
