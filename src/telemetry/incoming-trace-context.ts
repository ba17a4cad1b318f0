import { context, defaultTextMapGetter, trace, type Context } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

/** The `_meta` keys of an MCP request that carry its W3C trace context (MCP 2025-11-25, SEP-414). */
export const MCP_TRACE_META_KEYS = { traceparent: 'traceparent', tracestate: 'tracestate' } as const;

const w3c = new W3CTraceContextPropagator();

/**
 * The context of a request whose `_meta` carries a valid W3C `traceparent` (and `tracestate`): the active context
 * with the caller's span as the remote parent. Undefined without one, or when it is malformed (a bad value is
 * ignored, never an error). The W3C propagator is used whatever global propagator is installed, since the
 * format is the one MCP names.
 */
export function incomingTraceContext(meta: Readonly<Record<string, unknown>> | undefined): Context | undefined {
  const traceparent = meta?.[MCP_TRACE_META_KEYS.traceparent];
  if (typeof traceparent !== 'string') return undefined;
  const tracestate = meta?.[MCP_TRACE_META_KEYS.tracestate];
  const carrier: Record<string, string> = {
    traceparent,
    ...(typeof tracestate === 'string' ? { tracestate } : {}),
  };
  const extracted = w3c.extract(context.active(), carrier, defaultTextMapGetter);
  return trace.getSpanContext(extracted) ? extracted : undefined;
}

/**
 * Runs `fn` inside the trace context `meta` carries (see {@link incomingTraceContext}), so spans it starts (a
 * traced Temporal client's `StartWorkflow`) join the caller's trace; as it is without one.
 */
export function withIncomingTraceContext<T>(meta: Readonly<Record<string, unknown>> | undefined, fn: () => T): T {
  const incoming = incomingTraceContext(meta);
  return incoming ? context.with(incoming, fn) : fn();
}
