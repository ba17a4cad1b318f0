import { parseCommandArgs, portOption, stringOption } from './args';
import type { CliContext } from './command';
import { LOCAL_SERVER_DEFAULTS, type LocalServerOptions } from './local-server';
import { connectionSettingsFromEnv } from '../connection-settings';

/** The option spec of `--port`, `--ui-port`, `--db`. */
export const SERVER_OPTION_SPEC = {
  port: { type: 'string' },
  'ui-port': { type: 'string' },
  db: { type: 'string' },
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
      namespace: connectionSettingsFromEnv(context.env).namespace,
    },
  };
}
