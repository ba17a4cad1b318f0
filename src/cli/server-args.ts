import { parseCommandArgs, portOption, stringOption } from './args';
import { CliUsageError, type CliContext } from './command';

/** Where the command line's local server listens and keeps its state, from `--port`, `--ui-port`, `--db`. */
export interface LocalServerOptions {
  /** gRPC port; 0 picks a free one (default 7233). */
  port: number;
  /** Web UI port; 0 picks a free one (default 8233). */
  uiPort: number;
  /** SQLite file of the server's state, relative to the working directory; `memory` keeps it in memory. */
  db: string;
  namespace: string;
  /** Codec server the web UI decodes payloads with (`durable-tools codec-server`), if any. */
  uiCodecEndpoint?: string;
}

/** The defaults of {@link LocalServerOptions} (the ports Temporal's own tools use). */
export const LOCAL_SERVER_DEFAULTS = { port: 7233, uiPort: 8233, db: '.data/temporal.sqlite' } as const;

/** The options shared by the subcommands that start a server, for their `--help`. */
export const SERVER_OPTIONS_HELP = `  --port <n>      gRPC port of the server (default ${LOCAL_SERVER_DEFAULTS.port}; 0 = a free port)
  --ui-port <n>   web UI port (default ${LOCAL_SERVER_DEFAULTS.uiPort}; 0 = a free port)
  --db <file>     SQLite file keeping histories across restarts (default ${LOCAL_SERVER_DEFAULTS.db}; "memory" = none)
  --ui-codec-endpoint <url>  codec server the web UI decodes encrypted payloads with (durable-tools codec-server)`;

/** The option spec of `--port`, `--ui-port`, `--db`. */
export const SERVER_OPTION_SPEC = {
  port: { type: 'string' },
  'ui-port': { type: 'string' },
  db: { type: 'string' },
  'ui-codec-endpoint': { type: 'string' },
} as const;

/** Parses the arguments of a subcommand that starts a server (plus any extra options). */
export function parseArgs(
  argv: string[],
  context: CliContext,
  extra: Parameters<typeof parseCommandArgs>[1] = {},
): { options: LocalServerOptions; help: boolean; values: ReturnType<typeof parseCommandArgs>['values'] } {
  const { values, help } = parseCommandArgs(argv, { ...SERVER_OPTION_SPEC, ...extra });
  return {
    help,
    values,
    options: {
      port: portOption(values, 'port', LOCAL_SERVER_DEFAULTS.port),
      uiPort: portOption(values, 'ui-port', LOCAL_SERVER_DEFAULTS.uiPort),
      db: stringOption(values, 'db', LOCAL_SERVER_DEFAULTS.db)!,
      namespace: context.env.TEMPORAL_NAMESPACE || 'default',
      ...codecEndpointOption(values),
    },
  };
}

function codecEndpointOption(values: ReturnType<typeof parseCommandArgs>['values']): { uiCodecEndpoint?: string } {
  const url = stringOption(values, 'ui-codec-endpoint');
  if (url === undefined) return {};
  if (!/^https?:\/\/[^\s]+$/.test(url)) {
    throw new CliUsageError(`--ui-codec-endpoint must be an http(s) URL, not "${url}".`);
  }
  return { uiCodecEndpoint: url };
}
