/**
 * A real OpenTelemetry Collector for the telemetry tests: the one `test/support/otel-collector/` assembles from the
 * collector's Go modules (OTLP receiver, file exporter), built with Go once per machine into the same cache as the
 * Temporal CLI (`~/.cache/durable-tools/otelcol-<version>-<hash>/otelcol`; `npm run install-collector`), started
 * on a free port of 127.0.0.1 and read back from the file it exports to.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { findFreePort } from '../../src/dev-server/free-port';
import { buildStaged, durableToolsCacheRoot, findGo, goBuild, isExecutable } from '../../src/dev-server/go-build';
import { waitFor } from './wait-for';

/** The collector release every module of `test/support/otel-collector/go.mod` is pinned to. */
export const OTEL_COLLECTOR = { version: '0.161.0', moduleDir: join(__dirname, 'otel-collector') } as const;

/** The variable naming a collector executable to use instead of the cached build. */
export const OTEL_COLLECTOR_PATH_ENV = 'OTELCOL_PATH';

/**
 * Where the build is cached: beside the Temporal CLI's, named by the release and a hash of the module's sources,
 * so a change of `main.go` / `go.mod` / `go.sum` builds anew.
 */
export function otelCollectorPath(env: NodeJS.ProcessEnv = process.env): string {
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'go.sum', 'main.go']) hash.update(readFileSync(join(OTEL_COLLECTOR.moduleDir, file)));
  return join(
    durableToolsCacheRoot(env),
    `otelcol-${OTEL_COLLECTOR.version}-${hash.digest('hex').slice(0, 12)}`,
    'otelcol',
  );
}

/**
 * The collector executable: `OTELCOL_PATH`, the cached build, or a fresh build with Go (a few minutes, once per
 * machine; `nice -n 10`). Undefined when there is none and Go is missing (the test then says so and skips).
 */
export async function resolveOtelCollector(
  options: { env?: NodeJS.ProcessEnv; log?: (line: string) => void } = {},
): Promise<string | undefined> {
  const env = options.env ?? process.env;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const explicit = env[OTEL_COLLECTOR_PATH_ENV];
  if (explicit) {
    if (!isExecutable(explicit)) throw new Error(`${OTEL_COLLECTOR_PATH_ENV}=${explicit} is not an executable file.`);
    return explicit;
  }
  const cached = otelCollectorPath(env);
  if (isExecutable(cached)) return cached;
  const go = findGo(env);
  if (!go) return undefined;
  await buildOtelCollector(go, cached, env, log);
  return cached;
}

/** `go build` of the module through a staging directory, renamed into place: never a half-written binary. */
async function buildOtelCollector(
  go: string,
  target: string,
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Promise<void> {
  const what = `the OpenTelemetry Collector v${OTEL_COLLECTOR.version}`;
  await buildStaged(dirname(target), { what, log }, async (staging) => {
    const args = ['build', '-trimpath', '-ldflags=-s -w', '-o', join(staging, 'otelcol'), '.'];
    const fail = (message: string, cause?: Error) => new Error(message, { cause });
    await goBuild(go, args, { env, cwd: OTEL_COLLECTOR.moduleDir, nice: true, fail, what, log });
    mkdirSync(dirname(target), { recursive: true });
    renameSync(join(staging, 'otelcol'), target);
  });
}

/** An attribute as OTLP/JSON carries it. */
export interface OtlpAttribute {
  key: string;
  value: {
    stringValue?: string;
    intValue?: string | number;
    boolValue?: boolean;
    doubleValue?: number;
    arrayValue?: unknown;
  };
}

/** A span as the collector's file exporter writes it (OTLP/JSON: ids in hex, kinds and status codes as numbers). */
export interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  attributes?: OtlpAttribute[];
  links?: Array<{ traceId: string; spanId: string; attributes?: OtlpAttribute[] }>;
  status?: { code?: number; message?: string };
  /** The `service.name` of the resource that sent it (added when read). */
  service: string;
}

/** A metric as the file exporter writes it (only what the tests read). */
export interface CollectedMetric {
  name: string;
  unit?: string;
  /** The data points of a sum or a histogram, with their attributes. */
  points: Array<{ attributes?: OtlpAttribute[] }>;
  service: string;
}

/** A running collector. */
export interface OtelCollector {
  /** `http://127.0.0.1:<port>`: the OTLP/HTTP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`). */
  otlpHttpUrl: string;
  /** Every span exported to the file so far. */
  spans(): CollectedSpan[];
  /** Every metric exported to the file so far. */
  metrics(): CollectedMetric[];
  /** The collector's own log (stderr). */
  log(): string;
  /** Stops it (SIGTERM: it flushes the file) and waits for its exit. */
  stop(): Promise<void>;
}

/** Starts the collector with an OTLP/HTTP receiver on a free port of 127.0.0.1 and a file exporter into `dir`. */
export async function startOtelCollector(executable: string, dir: string): Promise<OtelCollector> {
  const port = await findFreePort();
  const file = join(dir, 'telemetry.jsonl');
  const config = join(dir, 'otelcol.yaml');
  writeFileSync(
    config,
    [
      'receivers:',
      '  otlp:',
      '    protocols:',
      '      http:',
      `        endpoint: 127.0.0.1:${port}`,
      'exporters:',
      '  file:',
      `    path: ${file}`,
      '    flush_interval: 100ms',
      'service:',
      // No internal metrics endpoint (it would take port 8888).
      '  telemetry:',
      '    metrics:',
      '      level: none',
      '  pipelines:',
      '    traces:',
      '      receivers: [otlp]',
      '      exporters: [file]',
      '    metrics:',
      '      receivers: [otlp]',
      '      exporters: [file]',
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(executable, ['--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitFor('the collector to be ready', () => {
    if (child.exitCode !== null) throw new Error(`the collector exited (${child.exitCode}):\n${log}`);
    return log.includes('Everything is ready');
  });
  const lines = () =>
    existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter((line) => line.trim() !== '')
      : [];
  return {
    otlpHttpUrl: `http://127.0.0.1:${port}`,
    spans: () => lines().flatMap(spansOf),
    metrics: () => lines().flatMap(metricsOf),
    log: () => log,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

type Resource = { resource?: { attributes?: OtlpAttribute[] } };

function serviceOf(resource: Resource): string {
  return String(attribute(resource.resource?.attributes, 'service.name') ?? '');
}

function spansOf(line: string): CollectedSpan[] {
  const data = JSON.parse(line) as {
    resourceSpans?: Array<Resource & { scopeSpans?: Array<{ spans?: Omit<CollectedSpan, 'service'>[] }> }>;
  };
  return (data.resourceSpans ?? []).flatMap((resource) =>
    (resource.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({ ...span, service: serviceOf(resource) })),
    ),
  );
}

function metricsOf(line: string): CollectedMetric[] {
  type Points = { dataPoints?: Array<{ attributes?: OtlpAttribute[] }> };
  type Metric = { name: string; unit?: string; sum?: Points; histogram?: Points; gauge?: Points };
  const data = JSON.parse(line) as {
    resourceMetrics?: Array<Resource & { scopeMetrics?: Array<{ metrics?: Metric[] }> }>;
  };
  return (data.resourceMetrics ?? []).flatMap((resource) =>
    (resource.scopeMetrics ?? []).flatMap((scope) =>
      (scope.metrics ?? []).map((metric) => ({
        name: metric.name,
        ...(metric.unit ? { unit: metric.unit } : {}),
        points: (metric.sum ?? metric.histogram ?? metric.gauge)?.dataPoints ?? [],
        service: serviceOf(resource),
      })),
    ),
  );
}

/** The value of an OTLP/JSON attribute (ints as numbers), or undefined. */
export function attribute(attributes: OtlpAttribute[] | undefined, key: string): string | number | boolean | undefined {
  const value = attributes?.find((a) => a.key === key)?.value;
  if (!value) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.boolValue !== undefined) return value.boolValue;
  return value.doubleValue;
}
