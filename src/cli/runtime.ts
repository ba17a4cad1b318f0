import { DefaultLogger, Runtime } from '@temporalio/worker';
import { privateRuntimeLogger } from '../telemetry/private-logs';

/**
 * Installs the Temporal runtime for a command that runs a worker: warnings and errors only, and no signal
 * handlers of its own — the command's lifecycle decides when the worker drains and in which order things stop.
 * With `prometheusBindAddress`, the runtime serves its own metrics (task slots, poll latencies, schedule-to-start,
 * workflow and activity counts, sticky cache) for Prometheus at `http://<address>/metrics`.
 */
export function installRuntime(options: { prometheusBindAddress?: string } = {}): void {
  Runtime.install({
    // Task tokens (and whole activity tasks) never reach a log line.
    logger: privateRuntimeLogger(new DefaultLogger('WARN')),
    shutdownSignals: [],
    ...(options.prometheusBindAddress
      ? { telemetryOptions: { metrics: { prometheus: { bindAddress: options.prometheusBindAddress } } } }
      : {}),
  });
}
