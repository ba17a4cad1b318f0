import type { TracerProvider } from '@opentelemetry/api';
import type { ClientInterceptors } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client';

/**
 * Client interceptors that start (signal, query, update) runs inside OpenTelemetry spans and pass the trace
 * context to the workflow, so a run's spans (`RunWorkflow:agentRun` and below) join the caller's trace. Spans go
 * to the global tracer provider unless `tracerProvider` is given.
 *
 * @example
 * ```ts
 * const client = new Client({ connection, interceptors: tracingClientInterceptors() });
 * ```
 */
export function tracingClientInterceptors(options: { tracerProvider?: TracerProvider } = {}): ClientInterceptors {
  const tracer = options.tracerProvider?.getTracer('@temporalio/interceptor-client');
  return { workflow: [new OpenTelemetryWorkflowClientInterceptor(tracer ? { tracer } : {})] };
}
