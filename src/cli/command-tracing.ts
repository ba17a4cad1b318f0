/**
 * Tracing of the commands that change runs (`run`, `chat`, `fork`, `eval`, `cancel`, `approve`, `reject`) when
 * the standard `OTEL_*` variables ask for traces: each is one span `durable-tools <command>` whose Temporal calls
 * with an effect (start, signal, update, cancel, terminate) are Temporal's client spans below it, their context
 * passed to the workflow in headers, so the worker's spans continue the same trace. A command that acts on an
 * existing run (an approval, a rejection, a cancellation, each message of a chat) is parented in that run's
 * trace: on the context its start carried (the first event of its history), so a run started traced — by `run`,
 * a traced client or `mcp` — is one trace with every decision taken on it. See docs/telemetry.md, "The command
 * line". Nothing of OpenTelemetry is loaded when the variables ask for no traces.
 */
import {
  context as otelContext,
  defaultTextMapGetter,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { Client, ClientInterceptors, WorkflowClientInterceptor } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { startTelemetry, telemetryConfigFromEnv } from '../telemetry/telemetry-from-env';
import type { CliContext } from './command';

/** Service name of the command line's spans when `OTEL_SERVICE_NAME` / `OTEL_RESOURCE_ATTRIBUTES` name none. */
export const CLI_SERVICE_NAME = 'durable-tools-cli';

/** The header Temporal's OpenTelemetry interceptors carry a trace context in (`@temporalio/interceptors-opentelemetry`). */
const TEMPORAL_TRACE_HEADER = '_tracer-data';

/** Attributes of a command span (besides Temporal's on the spans below it). */
export const COMMAND_SPAN_ATTRIBUTES = {
  command: 'durable_tools.command',
  workflowId: 'durable_tools.workflow_id',
  stepId: 'durable_tools.step_id',
  tool: 'durable_tools.tool',
  decision: 'durable_tools.decision',
  /** Whether the span is parented in the run's trace (`run`), or the run carried none (`none`). */
  parent: 'durable_tools.parent',
} as const;

/** Where a command span goes in a trace. */
export interface CommandSpanOptions {
  /** The run the command acts on: the span is parented in that run's trace when its start carried one. */
  run?: string;
  /** A run the command derives from (`fork`'s source): linked, not parented. */
  linkTo?: string;
  attributes?: Attributes;
}

/** Tracing of one command: the client interceptors to connect with, and its span. */
export interface CommandTracing {
  /** Temporal's OpenTelemetry client interceptor, for the calls that change a run only (reads stay untraced). */
  interceptors: ClientInterceptors;
  /**
   * Runs `fn` inside the span `durable-tools <command>` (ended when `fn` settles, status ERROR when it throws):
   * parented in the trace of `options.run` when that run's start carried a trace context, otherwise in the
   * caller's (`TRACEPARENT` / `TRACESTATE` in the environment) or as a root.
   */
  span<T>(client: Client, options: CommandSpanOptions, fn: () => Promise<T>): Promise<T>;
  /** Runs `fn` inside the trace of run `workflowId` (its start's context), or as it is when it has none. */
  inRunTrace<T>(client: Client, workflowId: string, fn: () => Promise<T>): Promise<T>;
}

const w3c = new W3CTraceContextPropagator();

/**
 * Starts OpenTelemetry's Node SDK for traces only (never metrics: a short-lived command must not take a
 * Prometheus port) when the `OTEL_*` variables ask for traces, flushed when the command ends. Undefined, with
 * nothing loaded, otherwise. Call it before connecting (so the flush comes after the connection closes).
 */
export async function startCommandTracing(cli: CliContext, command: string): Promise<CommandTracing | undefined> {
  if (!telemetryConfigFromEnv(cli.env).traces) return undefined;
  const telemetry = await startTelemetry({ serviceName: CLI_SERVICE_NAME, tracesOnly: true });
  if (!telemetry) return undefined;
  cli.lifecycle.defer('the OpenTelemetry SDK (flushing spans)', () => telemetry.shutdown());
  const { OpenTelemetryWorkflowClientInterceptor } = await import('@temporalio/interceptors-opentelemetry/lib/client');
  const traced = new OpenTelemetryWorkflowClientInterceptor();
  const changesOnly: WorkflowClientInterceptor = {
    start: (input, next) => traced.start(input, next),
    startWithDetails: (input, next) => traced.startWithDetails(input, next),
    startUpdate: (input, next) => traced.startUpdate(input, next),
    startUpdateWithStart: (input, next) => traced.startUpdateWithStart(input, next),
    signal: (input, next) => traced.signal(input, next),
    signalWithStart: (input, next) => traced.signalWithStart(input, next),
    cancel: (input, next) => traced.cancel(input, next),
    terminate: (input, next) => traced.terminate(input, next),
  };
  const tracer = trace.getTracer('durable-tools-cli');
  const caller = envTraceContext(cli.env);
  return {
    interceptors: { workflow: [changesOnly] },
    async span(client, options, fn) {
      const runContext = options.run ? await runTraceContext(client, options.run) : undefined;
      const source = options.linkTo ? await runTraceContext(client, options.linkTo) : undefined;
      const links: Link[] = [];
      const sourceSpan = source && trace.getSpanContext(source);
      if (sourceSpan)
        links.push({ context: sourceSpan, attributes: { [COMMAND_SPAN_ATTRIBUTES.workflowId]: options.linkTo! } });
      const callerSpan = runContext && caller && trace.getSpanContext(caller);
      if (callerSpan) links.push({ context: callerSpan });
      const attributes: Attributes = {
        [COMMAND_SPAN_ATTRIBUTES.command]: command,
        ...(options.run ? { [COMMAND_SPAN_ATTRIBUTES.workflowId]: options.run } : {}),
        ...(options.run ? { [COMMAND_SPAN_ATTRIBUTES.parent]: runContext ? 'run' : 'none' } : {}),
        ...options.attributes,
      };
      const parent = runContext ?? caller ?? ROOT_CONTEXT;
      return tracer.startActiveSpan(`durable-tools ${command}`, { attributes, links }, parent, async (span) => {
        try {
          return await fn();
        } catch (error) {
          span.recordException(error instanceof Error ? error : String(error));
          span.setStatus({
            code: SpanStatusCode.ERROR,
            message: error instanceof Error ? error.message : String(error),
          });
          throw error;
        } finally {
          span.end();
        }
      });
    },
    async inRunTrace(client, workflowId, fn) {
      const runContext = await runTraceContext(client, workflowId);
      return runContext ? otelContext.with(runContext, fn) : fn();
    },
  };
}

/**
 * The trace context the environment hands the command (`TRACEPARENT`, `TRACESTATE`: OpenTelemetry's environment
 * carrier, as a CI job or a script passes its own), or undefined.
 */
export function envTraceContext(env: NodeJS.ProcessEnv): Context | undefined {
  if (!env.TRACEPARENT) return undefined;
  const carrier = { traceparent: env.TRACEPARENT, ...(env.TRACESTATE ? { tracestate: env.TRACESTATE } : {}) };
  const extracted = w3c.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
  return trace.getSpanContext(extracted) ? extracted : undefined;
}

/**
 * The trace context run `workflowId` (its latest execution) was started with: the `_tracer-data` header of its
 * first history event, which Temporal's OpenTelemetry client interceptor writes (a traced start, or the
 * continue-as-new of a traced run). Undefined when it was started untraced, or cannot be read.
 */
export async function runTraceContext(client: Client, workflowId: string): Promise<Context | undefined> {
  try {
    const { history } = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId },
      maximumPageSize: 1,
    });
    const header =
      history?.events?.[0]?.workflowExecutionStartedEventAttributes?.header?.fields?.[TEMPORAL_TRACE_HEADER];
    if (!header) return undefined;
    const carrier = defaultPayloadConverter.fromPayload<Record<string, string>>(header);
    const extracted = w3c.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
    return trace.getSpanContext(extracted) ? extracted : undefined;
  } catch {
    return undefined;
  }
}

/** Runs `fn` inside the command's span when the command is traced, as it is otherwise. */
export function traced<T>(
  tracing: CommandTracing | undefined,
  client: Client,
  options: CommandSpanOptions,
  fn: () => Promise<T>,
): Promise<T> {
  return tracing ? tracing.span(client, options, fn) : fn();
}
