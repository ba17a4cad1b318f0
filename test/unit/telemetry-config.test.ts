import { telemetryConfigFromEnv } from '../../src/telemetry/telemetry-from-env';
import { TelemetryConfigError } from '../../src/telemetry/telemetry-config-error';
import { telemetryActivityDeps, telemetryWorkerOptions } from '../../src/telemetry/worker-telemetry';
import { TRACING_WORKFLOW_MODULES } from '../../src/telemetry/tracing-workflow-modules';
import { inMemoryMetrics, inMemoryTracing } from '../support/in-memory-telemetry';

describe('which telemetry the OTEL_* variables ask for', () => {
  test('nothing when no variable is set', () => {
    expect(telemetryConfigFromEnv({})).toEqual({ traces: false, metrics: false });
  });

  test('traces when an OTLP endpoint is set and no traces exporter is named', () => {
    expect(telemetryConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual({
      traces: true,
      metrics: false,
    });
  });

  test('each signal whose exporter is named, and not the one named none', () => {
    expect(telemetryConfigFromEnv({ OTEL_TRACES_EXPORTER: 'console', OTEL_METRICS_EXPORTER: 'prometheus' })).toEqual({
      traces: true,
      metrics: true,
    });
    expect(
      telemetryConfigFromEnv({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }),
    ).toEqual({ traces: false, metrics: false });
  });

  test('nothing at all when OTEL_SDK_DISABLED is true', () => {
    expect(
      telemetryConfigFromEnv({
        OTEL_SDK_DISABLED: 'true',
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_METRICS_EXPORTER: 'otlp',
      }),
    ).toEqual({ traces: false, metrics: false });
  });
});

describe('the worker options of telemetry', () => {
  test('add nothing to a worker without tracing', async () => {
    expect(await telemetryWorkerOptions({}, undefined)).toEqual({});
    expect(await telemetryWorkerOptions({}, { meterProvider: inMemoryMetrics().meterProvider })).toEqual({});
    expect(telemetryActivityDeps(undefined)).toEqual({});
  });

  test("with tracing, add Temporal's interceptors to the caller's and the workflow span sink", async () => {
    const own = { activity: [() => ({})], workflowModules: ['./mine'] };
    const added = await telemetryWorkerOptions(
      { interceptors: own },
      { tracing: { spanProcessor: inMemoryTracing().spanProcessor } },
    );
    expect(added.interceptors?.workflowModules).toEqual(['./mine', ...TRACING_WORKFLOW_MODULES]);
    expect(added.interceptors?.activity).toHaveLength(2);
    expect(Object.keys(added.sinks ?? {})).toEqual(['exporter']);
  });

  test('tracing through the global provider is refused with NO_TRACER_PROVIDER when no SDK registered one', async () => {
    const attempt = telemetryWorkerOptions({}, { tracing: true });
    await expect(attempt).rejects.toThrow(TelemetryConfigError);
    await expect(attempt).rejects.toMatchObject({ code: 'NO_TRACER_PROVIDER' });
  });
});
