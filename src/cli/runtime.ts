import { DefaultLogger, Runtime } from '@temporalio/worker';
import { privateRuntimeLogger } from '../telemetry/private-logs';
import { TelemetryConfigError } from '../telemetry/telemetry-config-error';

/**
 * Installs the Temporal runtime for a command that runs a worker: warnings and errors only, and no signal
 * handlers of its own — the command's lifecycle decides when the worker drains and in which order things stop.
 * With `prometheusBindAddress`, the runtime serves its own metrics (task slots, poll latencies, schedule-to-start,
 * workflow and activity counts, sticky cache) for Prometheus at `http://<address>/metrics`.
 *
 * @throws {@link TelemetryConfigError} `PORT_IN_USE` when the runtime cannot serve its metrics at
 * `prometheusBindAddress` (the port is taken): the worker stops at start instead of running without them.
 */
export function installRuntime(options: { prometheusBindAddress?: string } = {}): void {
  try {
    Runtime.install({
      // Task tokens (and whole activity tasks) never reach a log line.
      logger: privateRuntimeLogger(new DefaultLogger('WARN')),
      shutdownSignals: [],
      ...(options.prometheusBindAddress
        ? { telemetryOptions: { metrics: { prometheus: { bindAddress: options.prometheusBindAddress } } } }
        : {}),
    });
  } catch (cause) {
    const message = cause instanceof Error ? cause.message : String(cause);
    if (!options.prometheusBindAddress || !/prometheus/i.test(message)) throw cause;
    throw new TelemetryConfigError(
      `Temporal's runtime metrics (--prometheus ${options.prometheusBindAddress}) cannot be served: ${message}. ` +
        `Choose a free port for --prometheus (OpenTelemetry's Prometheus exporter, OTEL_METRICS_EXPORTER=prometheus, ` +
        `takes 9464 by default; docs/telemetry.md suggests 9465 for Temporal's).`,
      'PORT_IN_USE',
      { cause },
    );
  }
}
