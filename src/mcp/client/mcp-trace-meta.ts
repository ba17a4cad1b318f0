import { context, defaultTextMapSetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

const w3c = new W3CTraceContextPropagator();

/**
 * The W3C trace context of the active span as `_meta` entries of an outgoing MCP request (`traceparent` and, when
 * set, `tracestate`: the keys MCP 2026-07-28 defines, SEP-414), so the server's spans join the worker's trace.
 * Empty when no span is active (the worker is not traced). The W3C format is used whatever global propagator is
 * installed, since it is the one MCP names.
 */
export function outgoingTraceMeta(): Record<string, string> {
  const carrier: Record<string, string> = {};
  w3c.inject(context.active(), carrier, defaultTextMapSetter);
  return carrier;
}
