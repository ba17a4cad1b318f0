/**
 * The OpenTelemetry side of command tracing (see command-tracing.ts), loaded only when the `OTEL_*` variables
 * ask for traces.
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
import type { Client, WorkflowClientInterceptor } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { startTelemetry } from '../telemetry/telemetry-from-env';
import type { CliContext } from './command';
import { CLI_SERVICE_NAME, COMMAND_SPAN_ATTRIBUTES, type CommandTracing } from './command-tracing';

/** The header Temporal's OpenTelemetry interceptors carry a trace context in (`@temporalio/interceptors-opentelemetry`). */
const TEMPORAL_TRACE_HEADER = '_tracer-data';

const w3c = new W3CTraceContextPropagator();

/**
 * Starts OpenTelemetry's Node SDK for traces only, flushed when the command ends, and returns the command's
 * tracing (`startCommandTracing` calls it once the `OTEL_*` variables asked for traces).
 */
export async function startSdkCommandTracing(cli: CliContext, command: string): Promise<CommandTracing | undefined> {
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
