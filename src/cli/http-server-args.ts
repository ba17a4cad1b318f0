import { portOption, stringOption, type OptionSpec, type ParsedValues } from './args';
import { CliUsageError } from './command';

/** The option spec of `--port`, `--host`, `--allow-host` and the CORS origin option (`originOption`). */
export function httpServerOptionSpec(originOption: string): OptionSpec {
  return {
    port: { type: 'string' },
    host: { type: 'string' },
    [originOption]: { type: 'string', multiple: true },
    'allow-host': { type: 'string', multiple: true },
  };
}

/** Where a local HTTP server listens and whom it admits, as its `start…Server` function takes it. */
export interface HttpServerArgs {
  port: number;
  host: string;
  corsOrigins: string[];
  token?: string;
  allowedHosts?: string[];
}

/**
 * Reads the options of {@link httpServerOptionSpec} (host default 127.0.0.1) and the bearer token from
 * `env[tokenEnv]` (not an argument: `ps` would show it), for the commands that start a local HTTP server.
 *
 * @throws {@link CliUsageError} when a CORS origin is not `scheme://host[:port]`.
 */
export function httpServerArgs(
  values: ParsedValues,
  env: Readonly<Record<string, string | undefined>>,
  options: { defaultPort: number; originOption: string; defaultOrigins: readonly string[]; tokenEnv: string },
): HttpServerArgs {
  const corsOrigins = (values[options.originOption] as string[] | undefined) ?? [...options.defaultOrigins];
  for (const origin of corsOrigins) {
    if (!/^https?:\/\/[^/]+$/.test(origin)) {
      throw new CliUsageError(`--${options.originOption} must be scheme://host[:port], not "${origin}".`);
    }
  }
  const token = env[options.tokenEnv] || undefined;
  const allowedHosts = values['allow-host'] as string[] | undefined;
  return {
    port: portOption(values, 'port', options.defaultPort),
    host: stringOption(values, 'host', '127.0.0.1')!,
    corsOrigins,
    ...(token ? { token } : {}),
    ...(allowedHosts ? { allowedHosts } : {}),
  };
}
