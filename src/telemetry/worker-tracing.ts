import { context, propagation, trace, type TracerProvider } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/worker';
import type { WorkerOptions } from '@temporalio/worker';
import { TelemetryConfigError } from './telemetry-config-error';
import { leanWorkflowExporter } from './lean-workflow-spans';
import { TRACING_WORKFLOW_MODULES } from './tracing-workflow-modules';

/**
 * Where a worker's spans go. Without it (`tracing: true`), the global tracer provider registered by an
 * OpenTelemetry SDK (`NodeSDK`, or `startTelemetryFromEnv`) receives them.
 */
export interface WorkerTracingOptions {
  /** Receives every span: those of the activities and those the workflows create in their sandbox. */
  spanProcessor: SpanProcessor;
  /** Resource of the workflow spans (default: the SDK's default resource). */
  resource?: Resource;
  /**
   * Which `WorkflowInfo` fields the workflow spans carry: `lean` (default) the ids, type, task queue, namespace
   * and attempt (`WORKFLOW_SPAN_INFO_FIELDS`); `all` every field, nested values included, as Temporal's exporter
   * copies them.
   */
  workflowInfo?: 'lean' | 'all';
}

/**
 * Adds tracing to a worker's options: the activity interceptors (a `RunActivity:<tool>` span per attempt, child
 * of the workflow's `StartActivity:<tool>`), the workflow interceptor modules (bundled when the worker bundles its
 * workflows; a pre-built bundle must include {@link TRACING_WORKFLOW_MODULES}) and the sink that exports the
 * spans workflows create in their sandbox.
 *
 * @throws {@link TelemetryConfigError} `NO_TRACER_PROVIDER` when `tracing` is `true` and no OpenTelemetry SDK
 * registered a tracer provider.
 */
export function withWorkerTracing<T extends Pick<WorkerOptions, 'interceptors' | 'sinks'>>(
  options: T,
  tracing: boolean | WorkerTracingOptions,
): T {
  const target = tracingTarget(tracing);
  installPropagation();
  const tracer = target.tracerProvider?.getTracer('@temporalio/interceptor-activity');
  const interceptorOptions = tracer ? { tracer } : {};
  const interceptors = options.interceptors ?? {};
  return {
    ...options,
    interceptors: {
      ...interceptors,
      activity: [
        ...(interceptors.activity ?? []),
        (ctx) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(ctx, interceptorOptions),
          outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
      workflowModules: [...(interceptors.workflowModules ?? []), ...TRACING_WORKFLOW_MODULES],
    },
    sinks: { ...options.sinks, exporter: workflowExporter(target, tracing) },
  };
}

/** Temporal's workflow span exporter, lean unless the options ask for every `WorkflowInfo` field. */
function workflowExporter(target: TracingTarget, tracing: boolean | WorkerTracingOptions) {
  const exporter = makeWorkflowExporter(target.spanProcessor, target.resource);
  return typeof tracing === 'object' && tracing.workflowInfo === 'all' ? exporter : leanWorkflowExporter(exporter);
}

interface TracingTarget {
  spanProcessor: SpanProcessor;
  resource: Resource;
  /** Set when the spans do not go to the global tracer provider. */
  tracerProvider?: TracerProvider;
}

/** The tracer provider of each `{ spanProcessor }` given: the activity interceptors and the engine's spans share it. */
const ownProviders = new WeakMap<SpanProcessor, BasicTracerProvider>();

/**
 * The tracer provider a worker traced with `tracing` creates its worker-side spans with (the model calls' `chat`
 * spans): the one of its `spanProcessor`, or the global one an SDK registered.
 */
export function workerTracerProvider(tracing: true | WorkerTracingOptions): TracerProvider {
  if (tracing === true) return trace.getTracerProvider();
  return ownTracerProvider(tracing);
}

function ownTracerProvider(tracing: WorkerTracingOptions): BasicTracerProvider {
  const known = ownProviders.get(tracing.spanProcessor);
  if (known) return known;
  const tracerProvider = new BasicTracerProvider({ resource: tracing.resource ?? Resource.default() });
  tracerProvider.addSpanProcessor(tracing.spanProcessor);
  ownProviders.set(tracing.spanProcessor, tracerProvider);
  return tracerProvider;
}

function tracingTarget(tracing: boolean | WorkerTracingOptions): TracingTarget {
  if (typeof tracing === 'object') {
    const tracerProvider = ownTracerProvider(tracing);
    return { spanProcessor: tracing.spanProcessor, resource: tracerProvider.resource as Resource, tracerProvider };
  }
  // The global provider is a proxy; an SDK's provider behind it exposes its processors and resource.
  const global = trace.getTracerProvider() as TracerProvider & { getDelegate?: () => TracerProvider };
  const sdk = (global.getDelegate?.() ?? global) as Partial<BasicTracerProvider>;
  if (typeof sdk.getActiveSpanProcessor !== 'function' || !sdk.resource) {
    throw new TelemetryConfigError(
      'Tracing is on, but no OpenTelemetry SDK registered a tracer provider: start one before creating the worker ' +
        '(startTelemetryFromEnv() with OTEL_TRACES_EXPORTER set, or your own NodeSDK), or pass { spanProcessor }.',
      'NO_TRACER_PROVIDER',
    );
  }
  const provider = sdk as BasicTracerProvider;
  // Forwarded at each span, so processors the SDK adds later are included.
  const spanProcessor: SpanProcessor = {
    onStart: () => undefined,
    onEnd: (span) => provider.getActiveSpanProcessor().onEnd(span),
    forceFlush: () => provider.forceFlush(),
    shutdown: () => Promise.resolve(),
  };
  return { spanProcessor, resource: provider.resource as Resource };
}

let propagationInstalled = false;

/**
 * Activity spans find their workflow parent through the trace context Temporal carries in headers: that needs
 * a context manager and a propagator. An SDK registers both; registering again is refused, and that is fine.
 */
function installPropagation(): void {
  if (propagationInstalled) return;
  propagationInstalled = true;
  const contextManager = new AsyncLocalStorageContextManager();
  if (context.setGlobalContextManager(contextManager)) contextManager.enable();
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
}
