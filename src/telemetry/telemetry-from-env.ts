import { TelemetryConfigError } from './telemetry-config-error';

/** What the standard `OTEL_*` variables ask of a worker process. */
export interface TelemetryEnvConfig {
  /** Export traces: `OTEL_TRACES_EXPORTER` names an exporter, or is unset while an OTLP endpoint is set. */
  traces: boolean;
  /** Export the engine's metrics: `OTEL_METRICS_EXPORTER` names an exporter (otlp, prometheus, console). */
  metrics: boolean;
}

/** An OpenTelemetry SDK this process started from the environment. */
export interface StartedTelemetry extends TelemetryEnvConfig {
  /** Flushes what is buffered and stops the exporters. */
  shutdown(): Promise<void>;
}

/** Service name of the spans and metrics when neither `OTEL_SERVICE_NAME` nor `OTEL_RESOURCE_ATTRIBUTES` names one. */
export const DEFAULT_SERVICE_NAME = 'durable-tools-worker';

const named = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '' && item !== 'null');

const asksFor = (exporters: string[]): boolean => exporters.length > 0 && !exporters.includes('none');

/**
 * Reads which telemetry the `OTEL_*` variables ask for. Nothing is on unless a variable says so (the
 * OpenTelemetry default of exporting to a local OTLP collector is not assumed), and `OTEL_SDK_DISABLED=true`
 * turns everything off.
 *
 * @example
 * ```ts
 * telemetryConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }); // { traces: true, metrics: false }
 * ```
 */
export function telemetryConfigFromEnv(env: NodeJS.ProcessEnv = process.env): TelemetryEnvConfig {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return { traces: false, metrics: false };
  const traceExporters = named(env.OTEL_TRACES_EXPORTER);
  const otlpEndpoint = Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  return {
    traces: env.OTEL_TRACES_EXPORTER === undefined ? otlpEndpoint : asksFor(traceExporters),
    metrics: asksFor(named(env.OTEL_METRICS_EXPORTER)),
  };
}

/** The SDK package, an optional peer dependency: only workers that export telemetry need it installed. */
const NODE_SDK_PACKAGE = '@opentelemetry/sdk-node';

async function importNodeSdk(): Promise<typeof import('@opentelemetry/sdk-node')> {
  try {
    return await import('@opentelemetry/sdk-node');
  } catch (cause) {
    throw new TelemetryConfigError(
      `The OTEL_* variables ask for telemetry, which needs OpenTelemetry's Node SDK: npm install ${NODE_SDK_PACKAGE}@^0.57.2 (or unset them, or OTEL_SDK_DISABLED=true).`,
      'SDK_NOT_INSTALLED',
      { cause },
    );
  }
}

/**
 * Starts OpenTelemetry's Node SDK as the `OTEL_*` variables of this process configure it (exporters,
 * endpoints, protocols, headers, service name, resource attributes, sampler, export interval) and registers
 * it globally, so `createWorker({ telemetry: { tracing: true } })` and the engine's metrics use it. Returns
 * undefined, having loaded nothing, when the variables ask for no telemetry. `@opentelemetry/sdk-node` is an
 * optional peer dependency: install it to export telemetry (otherwise `SDK_NOT_INSTALLED`). The worker process
 * (`durable-tools worker`, `runWorkerProcess`) calls it; call it before creating a worker.
 *
 * @throws {@link TelemetryConfigError} `SDK_NOT_INSTALLED` when telemetry is asked for without the SDK package.
 *
 * @example
 * ```ts
 * const telemetry = await startTelemetryFromEnv();
 * const { worker } = await createWorker({ tools, telemetry: { tracing: telemetry?.traces ?? false } });
 * await worker.run();
 * await telemetry?.shutdown();
 * ```
 */
export async function startTelemetryFromEnv(): Promise<StartedTelemetry | undefined> {
  const config = telemetryConfigFromEnv(process.env);
  if (!config.traces && !config.metrics) return undefined;
  const { NodeSDK } = await importNodeSdk();
  const namesService =
    Boolean(process.env.OTEL_SERVICE_NAME) || /(^|,)\s*service\.name=/.test(process.env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const sdk = new NodeSDK({
    // Each signal only when asked for: the SDK would otherwise default to an OTLP exporter for it.
    ...(config.traces ? {} : { spanProcessors: [] }),
    logRecordProcessors: [],
    instrumentations: [],
    ...(namesService ? {} : { serviceName: DEFAULT_SERVICE_NAME }),
  });
  sdk.start();
  return { ...config, shutdown: () => sdk.shutdown() };
}
