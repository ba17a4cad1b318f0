import { connectionSettingsFromEnv } from '../../client/connection-settings';
import { parseArgs, SERVER_OPTIONS_HELP } from '../server-args';
import { EXIT_CODES, type CliCommand } from '../command';
import { startLocalServer } from '../local-server';
import { PARENT_WATCH_OPTION_HELP, PARENT_WATCH_OPTION_SPEC } from '../parent-watch';

/** `durable-tools server`: a local Temporal dev server and its web UI, until Ctrl-C / SIGTERM. */
export const serverCommand: CliCommand = {
  name: 'server',
  help: `usage: durable-tools server [options]

Starts a local Temporal dev server (the official Temporal CLI, found or built like install-cli) with its
web UI and the DurableRunStatus search attribute, and keeps it running until Ctrl-C or SIGTERM. It always
starts its own server: a taken port is an error, never silently reused. TEMPORAL_ADDRESS is not used here.

options:
${SERVER_OPTIONS_HELP}
${PARENT_WATCH_OPTION_HELP}
  -h, --help      this help

exit codes: 0 stopped by Ctrl-C/SIGTERM after stopping the server, 1 the server could not start,
2 bad arguments. Through npm/npx, npm may report 130/143 instead of 0 (see docs/operations.md, "Exit codes").`,
  async run(argv, context) {
    const { options, help, values } = parseArgs(argv, context, PARENT_WATCH_OPTION_SPEC);
    if (help) return (context.out(serverCommand.help), EXIT_CODES.ok);
    if (values['no-parent-watch'] === true) context.lifecycle.stopWatchingParent();
    const settings = connectionSettingsFromEnv(context.env);
    if (settings.addressFromEnv) {
      context.err(
        `Note: TEMPORAL_ADDRESS (or a profile) points at ${settings.address}; \`server\` starts its own server regardless.`,
      );
    }
    const server = await startLocalServer(options, context);
    context.out(
      `Temporal server at ${server.address}, web UI at ${server.uiUrl ?? '(none)'} (namespace ${server.namespace}, pid ${server.pid}).`,
    );
    context.out(`Workers and runs use it with TEMPORAL_ADDRESS=${server.address}. Ctrl-C stops it.`);
    await context.lifecycle.stopRequested;
    await context.lifecycle.stopAll();
    context.out('Temporal server stopped.');
    return EXIT_CODES.ok;
  },
};
