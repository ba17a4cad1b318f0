import { DurableToolsError } from '../contract/durable-tools-error';

/** Codes of {@link TelemetryConfigError}. */
export type TelemetryConfigErrorCode =
  | 'NO_TRACER_PROVIDER'
  | 'INVALID_PROMETHEUS_ADDRESS'
  | 'SDK_NOT_INSTALLED'
  /** A metrics endpoint (OpenTelemetry's Prometheus exporter, Temporal's `--prometheus`) cannot bind its port. */
  | 'PORT_IN_USE';

/** Tracing or metrics were asked for, but their configuration cannot work. */
export class TelemetryConfigError extends DurableToolsError<TelemetryConfigErrorCode> {
  override readonly name = 'TelemetryConfigError';
}
