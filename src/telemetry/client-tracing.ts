import type { TracerProvider } from '@opentelemetry/api';
import type { ClientInterceptors } from '@temporalio/client';

/**
 * Client interceptors that start (signal, query, update) runs inside OpenTelemetry spans and pass the trace
 * context to the workflow, so a run's spans (`RunWorkflow:agentRun` and below) join the caller's trace. Spans go
 * to the global tracer provider unless `tracerProvider` is given. Asynchronous so that the client entry loads
 * the tracing modules only when asked.
 *
 * @example
 * ```ts
 * const client = new Client({ connection, interceptors: await tracingClientInterceptors() });
 * ```
 */
export async function tracingClientInterceptors(
  options: { tracerProvider?: TracerProvider } = {},
): Promise<ClientInterceptors> {
  const { OpenTelemetryWorkflowClientInterceptor } = await import('@temporalio/interceptors-opentelemetry/lib/client');
  const tracer = options.tracerProvider?.getTracer('@temporalio/interceptor-client');
  return { workflow: [new OpenTelemetryWorkflowClientInterceptor(tracer ? { tracer } : {})] };
}
