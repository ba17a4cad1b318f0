import { portOption, stringOption, type OptionSpec, type ParsedValues } from './args';
import { CliUsageError, type CliContext } from './command';

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

/**
 * Starts a local HTTP server for a command and has it closed when the command stops (as `what`). A server refused as
 * configured (an `InvalidConfig` error: beyond loopback without a token) is told on stderr, naming `tokenEnv`, and
 * gives undefined (the command exits 1); any other failure is thrown.
 */
export async function startCommandServer<S extends { close(): Promise<void> }>(
  context: CliContext,
  what: string,
  options: { tokenEnv: string; invalidConfig: abstract new (...args: never[]) => Error },
  start: () => Promise<S>,
): Promise<S | undefined> {
  let server: S;
  try {
    server = await start();
  } catch (error) {
    if (!(error instanceof options.invalidConfig)) throw error;
    context.err(`${error.message} (${options.tokenEnv})`);
    return undefined;
  }
  context.lifecycle.defer(what, () => server.close());
  return server;
}
