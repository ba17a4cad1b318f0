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
import type { Attributes } from '@opentelemetry/api';
import type { Client, ClientInterceptors } from '@temporalio/client';
import { telemetryConfigFromEnv } from '../telemetry/telemetry-from-env';
import type { CliContext } from './command';

/** Service name of the command line's spans when `OTEL_SERVICE_NAME` / `OTEL_RESOURCE_ATTRIBUTES` name none. */
export const CLI_SERVICE_NAME = 'durable-tools-cli';

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

/**
 * Starts OpenTelemetry's Node SDK for traces only (never metrics: a short-lived command must not take a
 * Prometheus port) when the `OTEL_*` variables ask for traces, flushed when the command ends. Undefined, with
 * nothing of OpenTelemetry loaded, otherwise. Call it before connecting (so the flush comes after the connection
 * closes).
 */
export async function startCommandTracing(cli: CliContext, command: string): Promise<CommandTracing | undefined> {
  if (!telemetryConfigFromEnv(cli.env).traces) return undefined;
  const { startSdkCommandTracing } = await import('./command-tracing-sdk');
  return startSdkCommandTracing(cli, command);
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
