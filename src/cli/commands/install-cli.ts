import { resolveTemporalCli } from '../../dev-server/temporal-cli';
import { parseCommandArgs } from '../args';
import { EXIT_CODES, type CliCommand } from '../command';

/** `durable-tools install-cli`: find or build the Temporal CLI and print its path. */
export const installCliCommand: CliCommand = {
  name: 'install-cli',
  help: `usage: durable-tools install-cli

Finds the Temporal CLI (TEMPORAL_CLI_PATH, temporal on PATH, the cached build) or builds it with Go
(minutes, once per machine), and prints its path and where it came from. The path can be used as typed:
  "$(durable-tools install-cli --path)" workflow list

options:
  --path          print only the path
  -h, --help      this help

exit codes: 0 found or built, 1 not found and could not be built, 2 bad arguments`,
  async run(argv, context) {
    const { values, help } = parseCommandArgs(argv, { path: { type: 'boolean' } });
    if (help) return (context.out(installCliCommand.help), EXIT_CODES.ok);
    const cli = await resolveTemporalCli({ env: context.env, log: context.err });
    context.out(values.path === true ? cli.path : `${cli.path} (${cli.source})`);
    return EXIT_CODES.ok;
  },
};
