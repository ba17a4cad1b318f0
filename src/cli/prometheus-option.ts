import { stringOption, type ParsedValues } from './args';
import { CliUsageError, type CliContext } from './command';

/** The environment variable of `--prometheus`. */
const PROMETHEUS_ENV = 'DURABLE_TOOLS_PROMETHEUS_ADDRESS';

/** The option spec of `--prometheus`. */
export const PROMETHEUS_OPTION_SPEC = { prometheus: { type: 'string' } } as const;

/** `--prometheus` in a subcommand's help. */
export const PROMETHEUS_OPTION_HELP = `  --prometheus <host:port>  serve Temporal's worker runtime metrics for Prometheus at
                  http://<host:port>/metrics (default: $${PROMETHEUS_ENV}; none when unset). A port of
                  its own (e.g. 9465: OTEL_METRICS_EXPORTER=prometheus takes 9464); a taken port stops the worker`;

/** The bind address of the runtime's Prometheus endpoint, if asked for; a usage error when it is not host:port. */
export function prometheusOption(values: ParsedValues, context: CliContext): string | undefined {
  const address = stringOption(values, 'prometheus') ?? (context.env[PROMETHEUS_ENV] || undefined);
  if (address === undefined) return undefined;
  const match = /^(.+):(\d{1,5})$/.exec(address);
  const port = match ? Number(match[2]) : NaN;
  if (!match || port < 1 || port > 65_535) {
    throw new CliUsageError(
      `--prometheus must be host:port, such as 127.0.0.1:9465 or 0.0.0.0:9465 (got ${JSON.stringify(address)}).`,
    );
  }
  return address;
}
