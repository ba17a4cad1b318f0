import { context, propagation } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { DataPointType, MeterProvider, MetricReader, type MetricData } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';

/** A metric reader that keeps nothing of its own: tests collect from it when they look. */
class InMemoryMetricReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** One point of a metric: its attributes and its value (a counter's sum, a histogram's count, sum and buckets). */
export interface MetricPoint {
  attributes: Record<string, unknown>;
  value: number;
  count?: number;
  /** A histogram's bucket boundaries. */
  boundaries?: number[];
  /** The unit of the metric's instrument. */
  unit?: string;
}

/** A meter provider whose metrics the test reads back. */
export function inMemoryMetrics() {
  const reader = new InMemoryMetricReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const collect = async (name: string): Promise<MetricPoint[]> => {
    const { resourceMetrics } = await reader.collect();
    const data: MetricData[] = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    return data
      .filter((metric) => metric.descriptor.name === name)
      .flatMap((metric) =>
        metric.dataPointType === DataPointType.HISTOGRAM
          ? metric.dataPoints.map((p) => ({
              attributes: p.attributes,
              value: p.value.sum ?? 0,
              count: p.value.count,
              boundaries: p.value.buckets.boundaries,
              unit: metric.descriptor.unit,
            }))
          : metric.dataPointType === DataPointType.SUM || metric.dataPointType === DataPointType.GAUGE
            ? metric.dataPoints.map((p) => ({ attributes: p.attributes, value: p.value, unit: metric.descriptor.unit }))
            : [],
      );
  };
  const matching = async (name: string, attributes: Record<string, unknown>) =>
    (await collect(name)).filter((p) => Object.entries(attributes).every(([k, v]) => p.attributes[k] === v));
  return {
    meterProvider,
    /** Every point of the metric. */
    points: collect,
    /** A counter's total over the points whose attributes include `attributes`. */
    total: async (name: string, attributes: Record<string, unknown> = {}) =>
      (await matching(name, attributes)).reduce((sum, p) => sum + p.value, 0),
    /** How many values a histogram recorded over the points whose attributes include `attributes`. */
    recorded: async (name: string, attributes: Record<string, unknown> = {}) =>
      (await matching(name, attributes)).reduce((sum, p) => sum + (p.count ?? 0), 0),
  };
}

let propagationInstalled = false;

/**
 * A tracer provider writing to an in-memory exporter. Installs, once per test file, what an OpenTelemetry
 * SDK installs in a real process: the async-hooks context manager and the W3C trace-context propagator.
 */
export function inMemoryTracing() {
  if (!propagationInstalled) {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    propagationInstalled = true;
  }
  const exporter = new InMemorySpanExporter();
  const spanProcessor = new SimpleSpanProcessor(exporter);
  const tracerProvider = new BasicTracerProvider();
  tracerProvider.addSpanProcessor(spanProcessor);
  return {
    exporter,
    spanProcessor,
    tracerProvider,
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
  };
}
