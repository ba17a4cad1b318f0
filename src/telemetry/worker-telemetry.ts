import type { MeterProvider, TracerProvider } from '@opentelemetry/api';
import type { WorkerOptions } from '@temporalio/worker';
import type { WorkerTracingOptions } from './worker-tracing';

/**
 * OpenTelemetry of a worker (`createWorker({ telemetry })`); see docs/telemetry.md. Without it
 * the worker traces nothing and records its metrics on the global meter provider (a no-op until an SDK
 * registers one).
 */
export interface WorkerTelemetryOptions {
  /**
   * Trace runs, model turns, tool calls (one span per attempt) and compensations: `true` sends the spans to
   * the tracer provider an OpenTelemetry SDK registered globally (`startTelemetryFromEnv`, or your NodeSDK),
   * `{ spanProcessor }` to that processor. The workflows are bundled with Temporal's OpenTelemetry workflow
   * interceptors; a pre-built `workflowBundle` must include `TRACING_WORKFLOW_MODULES` itself.
   */
  tracing?: boolean | WorkerTracingOptions;
  /** Where the engine's metrics go (default: the global meter provider). */
  meterProvider?: MeterProvider;
}

/**
 * The worker options tracing adds to (or merges with) the caller's: interceptors and sinks. Nothing without
 * tracing, so an untraced worker is created exactly as before, without loading the tracing modules.
 */
export async function telemetryWorkerOptions(
  workerOptions: Partial<WorkerOptions> | undefined,
  telemetry: WorkerTelemetryOptions | undefined,
): Promise<Pick<WorkerOptions, 'interceptors' | 'sinks'>> {
  if (!telemetry?.tracing) return {};
  const { withWorkerTracing } = await import('./worker-tracing');
  const { interceptors, sinks } = withWorkerTracing(workerOptions ?? {}, telemetry.tracing);
  return { interceptors, sinks };
}

/**
 * The tracer provider of the engine's worker-side spans (the model calls' `chat` spans) when the worker traces;
 * undefined, with nothing loaded, when it does not.
 */
export async function telemetryTracerProvider(
  telemetry: WorkerTelemetryOptions | undefined,
): Promise<TracerProvider | undefined> {
  if (!telemetry?.tracing) return undefined;
  const { workerTracerProvider } = await import('./worker-tracing');
  return workerTracerProvider(telemetry.tracing);
}

/** What the engine's activities need of the telemetry options (the meter provider, when one is given). */
export function telemetryActivityDeps(telemetry: WorkerTelemetryOptions | undefined): {
  meterProvider?: MeterProvider;
} {
  return telemetry?.meterProvider ? { meterProvider: telemetry.meterProvider } : {};
}
