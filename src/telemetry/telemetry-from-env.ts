import { createServer } from 'node:net';
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

/** Options of {@link startTelemetry}. */
export interface StartTelemetryOptions {
  /** Service name when the variables name none (default {@link DEFAULT_SERVICE_NAME}). */
  serviceName?: string;
  /**
   * Start only the traces the variables ask for, never metrics (the command line's short-lived commands: a
   * Prometheus endpoint of theirs would take the worker's port for nothing).
   */
  tracesOnly?: boolean;
}

/** The port OpenTelemetry's Prometheus exporter binds by default (`OTEL_EXPORTER_PROMETHEUS_PORT`). */
export const OTEL_PROMETHEUS_DEFAULT_PORT = 9464;

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
 * @throws {@link TelemetryConfigError} `SDK_NOT_INSTALLED` when telemetry is asked for without the SDK package;
 * `PORT_IN_USE` when `OTEL_METRICS_EXPORTER` names `prometheus` and its port (`OTEL_EXPORTER_PROMETHEUS_PORT`,
 * default 9464) is taken.
 *
 * @example
 * ```ts
 * const telemetry = await startTelemetryFromEnv();
 * const { worker } = await createWorker({ tools, telemetry: { tracing: telemetry?.traces ?? false } });
 * await worker.run();
 * await telemetry?.shutdown();
 * ```
 */
export function startTelemetryFromEnv(): Promise<StartedTelemetry | undefined> {
  return startTelemetry();
}

/**
 * {@link startTelemetryFromEnv} with options: the command line starts traces only, under its own service name.
 *
 * @throws {@link TelemetryConfigError} as {@link startTelemetryFromEnv}.
 */
export async function startTelemetry(options: StartTelemetryOptions = {}): Promise<StartedTelemetry | undefined> {
  const asked = telemetryConfigFromEnv(process.env);
  const config = options.tracesOnly ? { traces: asked.traces, metrics: false } : asked;
  if (!config.traces && !config.metrics) return undefined;
  const { NodeSDK } = await importNodeSdk();
  // The SDK's Prometheus exporter only logs a port it cannot bind (at OTEL_LOG_LEVEL=error) and the metrics
  // vanish: the port is checked first, so a taken one stops the process at start, named.
  if (config.metrics && named(process.env.OTEL_METRICS_EXPORTER).includes('prometheus')) {
    await ensurePortFree(prometheusExporterAddress(process.env));
  }
  // Without OTEL_LOG_LEVEL the SDK logs nothing, so an export that fails (a collector down) would vanish:
  // its errors go to stderr unless the variable says otherwise.
  if (!process.env.OTEL_LOG_LEVEL?.trim()) await logExportErrors();
  const namesService =
    Boolean(process.env.OTEL_SERVICE_NAME) || /(^|,)\s*service\.name=/.test(process.env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const withoutMetrics = !config.metrics && process.env.OTEL_METRICS_EXPORTER !== undefined;
  const sdk = withEnv(withoutMetrics ? { OTEL_METRICS_EXPORTER: 'none' } : {}, () => {
    const started = new NodeSDK({
      // Each signal only when asked for: the SDK would otherwise default to an OTLP exporter for it.
      ...(config.traces ? {} : { spanProcessors: [] }),
      logRecordProcessors: [],
      instrumentations: [],
      ...(namesService ? {} : { serviceName: options.serviceName ?? DEFAULT_SERVICE_NAME }),
    });
    started.start();
    return started;
  });
  return { ...config, shutdown: () => sdk.shutdown() };
}

/** Runs `fn` with some variables of this process replaced, then puts them back (the SDK reads them at start). */
function withEnv<T>(replaced: Record<string, string>, fn: () => T): T {
  const before = Object.fromEntries(Object.keys(replaced).map((name) => [name, process.env[name]]));
  Object.assign(process.env, replaced);
  try {
    return fn();
  } finally {
    for (const [name, value] of Object.entries(before)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/** Where OpenTelemetry's Prometheus exporter listens: `OTEL_EXPORTER_PROMETHEUS_HOST` (all addresses) and `_PORT`. */
export function prometheusExporterAddress(env: NodeJS.ProcessEnv): { host?: string; port: number } {
  const host = env.OTEL_EXPORTER_PROMETHEUS_HOST?.trim() || undefined;
  const port = Number(env.OTEL_EXPORTER_PROMETHEUS_PORT) || OTEL_PROMETHEUS_DEFAULT_PORT;
  return { ...(host ? { host } : {}), port };
}

/**
 * Binds the address for a moment, as the exporter is about to: a port already taken (Temporal's `--prometheus`
 * on the same port, another worker) is a {@link TelemetryConfigError} `PORT_IN_USE` naming it.
 */
async function ensurePortFree(address: { host?: string; port: number }): Promise<void> {
  const where = `${address.host ?? '0.0.0.0'}:${address.port}`;
  await new Promise<void>((resolve, reject) => {
    const server = createServer();
    server.once('error', (cause: NodeJS.ErrnoException) =>
      reject(
        new TelemetryConfigError(
          `OpenTelemetry's Prometheus exporter (OTEL_METRICS_EXPORTER=prometheus) cannot listen on ${where}: ` +
            `${cause.code === 'EADDRINUSE' ? 'the port is in use' : cause.message}. Its metrics would vanish, so the ` +
            `process stops. Give it a free port with OTEL_EXPORTER_PROMETHEUS_PORT (default ${OTEL_PROMETHEUS_DEFAULT_PORT}); ` +
            "Temporal's own metrics (--prometheus) need a port of their own.",
          'PORT_IN_USE',
          { cause },
        ),
      ),
    );
    server.listen({ port: address.port, ...(address.host ? { host: address.host } : {}) }, () =>
      server.close(() => resolve()),
    );
  });
}

/**
 * Sends the SDK's errors (failed exports, mostly) to stderr, one line each: `durable-tools: OpenTelemetry: <message>`.
 * The API's refusal to register a context manager or propagator twice is left out: the worker's tracing registers
 * them in case no SDK did, and is refused when one did.
 */
async function logExportErrors(): Promise<void> {
  const { diag, DiagLogLevel } = await import('@opentelemetry/api');
  const error = (message: string, ...args: unknown[]) => {
    const text = [message, ...args].map(errorText).join(' ');
    if (!text.includes('Attempted duplicate registration'))
      process.stderr.write(`durable-tools: OpenTelemetry: ${text}\n`);
  };
  const ignore = () => undefined;
  diag.setLogger(
    { error, warn: ignore, info: ignore, debug: ignore, verbose: ignore },
    { logLevel: DiagLogLevel.ERROR, suppressOverrideMessage: true },
  );
}

/** The message of what the SDK logs: an error, or the JSON its error handler makes of one. */
function errorText(value: unknown): string {
  if (value instanceof Error) return value.message;
  if (typeof value !== 'string') return String(value);
  try {
    const parsed = JSON.parse(value) as { message?: unknown };
    return typeof parsed.message === 'string' ? parsed.message : value;
  } catch {
    return value;
  }
}
