/**
 * `npm run install-collector`: finds or builds the OpenTelemetry Collector of the telemetry tests
 * (test/support/otel-collector.ts) and prints its path. CI runs it beside `install-cli`, so `npm test` finds it
 * cached; without Go it says so and exits 1.
 */
import { findGo } from '../../src/dev-server/go-build';
import { OTEL_COLLECTOR, resolveOtelCollector } from './otel-collector';

async function main(): Promise<number> {
  const path = await resolveOtelCollector();
  if (!path) {
    process.stderr.write(
      `durable-tools: the OpenTelemetry Collector v${OTEL_COLLECTOR.version} is not built and Go was not found ` +
        `(${findGo() ?? 'no go on PATH or /usr/local/go/bin'}): install Go, or set OTELCOL_PATH to a collector ` +
        'with the otlp receiver and the file exporter.\n',
    );
    return 1;
  }
  process.stdout.write(`${path}\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`durable-tools: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
