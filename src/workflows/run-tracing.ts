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
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Link,
  type Span,
} from '@opentelemetry/api';
import {
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  ContinueAsNew,
  isCancellation,
  TimeoutFailure,
} from '@temporalio/workflow';
import type { ModelTurn } from '../contract/model-types';
import type {
  AgentRunInput,
  AgentRunResult,
  PendingCompensation,
  RunStatus,
  StepRecord,
} from '../contract/agent-run-types';
import {
  ERROR_TYPE_OTHER,
  GEN_AI_ATTRIBUTES as GEN_AI,
  GEN_AI_OPERATIONS,
  GEN_AI_TOOL_TYPE,
  genAiProviderName,
} from '../contract/gen-ai-conventions';
import { compensationKey } from './run-ownership';

/**
 * Span names and attributes of the engine's workflow spans. The `gen_ai.*` attributes the spans carry beside these
 * are the OpenTelemetry GenAI conventions' (`GEN_AI_ATTRIBUTES`, docs/telemetry.md).
 */
export const RUN_SPANS = {
  /**
   * One per agent invocation (a run's generation, or a conversation's message), named `invoke_agent <agent>` (just
   * `invoke_agent` when the run has no agent name); parent of the spans below.
   */
  agent: 'invoke_agent',
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

/** Marks the active span (the run's `invoke_agent` span when traced) with the status the run ends with. */
export function markRunStatus(status: RunStatus): void {
  trace.getActiveSpan()?.setAttribute(A.runStatus, status);
}

/** Runs one model turn inside its span. */
export function traceModelTurn(turnNumber: number, ask: () => Promise<ModelTurn>): Promise<ModelTurn> {
  if (!tracing()) return ask();
  return inSpan(RUN_SPANS.modelTurn, {}, async (span) => {
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
  const name = `${RUN_SPANS.toolCall} ${tool.slice(0, SPAN_NAME_TOOL_CHARS)}`;
  const start = { [GEN_AI.operationName]: GEN_AI_OPERATIONS.executeTool, [GEN_AI.toolType]: GEN_AI_TOOL_TYPE };
  return inSpan(name, { attributes: start }, async (span) => {
    const step = await run();
    const failed = step.observation?.status === 'error' ? step.observation.code : undefined;
    span.setAttributes({
      [GEN_AI.toolName]: step.tool,
      [GEN_AI.toolCallId]: step.toolCallId,
      [A.tool]: step.tool,
      [A.toolCallId]: step.toolCallId,
      [A.stepId]: step.stepId,
      [A.idempotencyKey]: step.idempotencyKey,
      [A.stepStatus]: step.status,
      ...(step.attempts !== undefined ? { [A.attempts]: step.attempts } : {}),
      ...(failed !== undefined ? { [A.errorCode]: failed, [GEN_AI.errorType]: failed } : {}),
    });
    // A failed step (refused, failed, rejected) is an operation that ended in an error: its code says which.
    if (failed !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: failed });
    const compensation = pending.find((item) => item.stepId === step.stepId);
    const { traceId, spanId, traceFlags } = span.spanContext();
    if (compensation && isSpanContextValid(span.spanContext())) compensation.span = { traceId, spanId, traceFlags };
    return step;
  });
}

/** Runs one compensation inside its span, linked to the span of the step it undoes. */
export function traceCompensation<T>(item: PendingCompensation, compensate: () => Promise<T>): Promise<T> {
  const links: Link[] = item.span ? [{ context: item.span, attributes: { [A.stepId]: item.stepId } }] : [];
  return inSpan(`${RUN_SPANS.compensation} ${item.undo}`, { links }, (span) => {
    span.setAttributes({
      [A.tool]: item.undo,
      [A.compensationOf]: item.tool,
      [A.stepId]: item.stepId,
      [A.idempotencyKey]: compensationKey(item.idempotencyKey),
    });
    return compensate();
  });
}

/** What an agent invocation is about: the run's input, and the conversation it answers a message of. */
export interface AgentInvocation {
  input: AgentRunInput;
  /** The conversation's id (its workflow id), when the run answers one of its messages. */
  conversationId?: string;
}

/**
 * Runs one agent invocation (a generation of a run, or a conversation's message) inside its `invoke_agent` span:
 * the GenAI agent attributes at the start, the tokens the invocation used and how it ended at the end. A run that
 * ends other than completed is an error (`error.type` its status); so is a throw (a cancellation), but not the
 * end of a generation by continue-as-new.
 */
export function traceAgentInvocation(
  invocation: AgentInvocation,
  run: () => Promise<AgentRunResult>,
): Promise<AgentRunResult> {
  if (!tracing()) return run();
  const { input, conversationId } = invocation;
  const agentName = input.agentName ?? input.subAgent?.tool;
  const name = agentName ? `${RUN_SPANS.agent} ${agentName.slice(0, SPAN_NAME_TOOL_CHARS)}` : RUN_SPANS.agent;
  const attributes: Attributes = {
    [GEN_AI.operationName]: GEN_AI_OPERATIONS.invokeAgent,
    [GEN_AI.providerName]: genAiProviderName(String(input.model?.provider)),
    ...(agentName ? { [GEN_AI.agentName]: agentName } : {}),
    ...(typeof input.model?.model === 'string' ? { [GEN_AI.requestModel]: input.model.model } : {}),
    ...(conversationId !== undefined ? { [GEN_AI.conversationId]: conversationId } : {}),
  };
  // The span of the workflow (Temporal's `RunWorkflow:agentRun`) shows how the run ended too.
  const workflowSpan = trace.getActiveSpan();
  return inSpan(name, { attributes }, async (span) => {
    let result: AgentRunResult;
    try {
      result = await run();
    } catch (error) {
      if (isCancellation(error)) workflowSpan?.setAttribute(A.runStatus, 'cancelled');
      throw error;
    }
    workflowSpan?.setAttribute(A.runStatus, result.status);
    const before = input.carriedOver?.usage;
    span.setAttributes({
      [GEN_AI.usageInputTokens]: Math.max(0, result.usage.inputTokens - (before?.inputTokens ?? 0)),
      [GEN_AI.usageOutputTokens]: Math.max(0, result.usage.outputTokens - (before?.outputTokens ?? 0)),
      [A.runStatus]: result.status,
    });
    if (result.status !== 'completed') {
      span.setAttribute(GEN_AI.errorType, result.status);
      span.setStatus({ code: SpanStatusCode.ERROR, message: result.status });
    }
    return result;
  });
}

/**
 * The `error.type` of what a workflow span's work threw: a failed activity's failure type (`PERMISSION_DENIED`),
 * `cancelled`, `timeout`, or `_OTHER`.
 */
function errorTypeOf(error: unknown): string {
  const failure = error instanceof ActivityFailure ? error.cause : error;
  if (failure instanceof ApplicationFailure && failure.type) return failure.type;
  if (failure instanceof CancelledFailure) return 'cancelled';
  if (failure instanceof TimeoutFailure) return 'timeout';
  return ERROR_TYPE_OTHER;
}

/** `fn` inside an active internal span that ends with it, marked as an error (with its `error.type`) when it throws. */
function inSpan<T>(
  name: string,
  options: { links?: Link[]; attributes?: Attributes },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  if (!tracing()) return fn(UNTRACED_SPAN);
  return tracer().startActiveSpan(name, { kind: SpanKind.INTERNAL, ...options }, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      // continueAsNew() ends a generation by throwing: no failure.
      if (!(error instanceof ContinueAsNew)) {
        span.setAttribute(GEN_AI.errorType, errorTypeOf(error));
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      }
      throw error;
    } finally {
      span.end();
    }
  });
}
