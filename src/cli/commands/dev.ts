import { connectionSettingsFromEnv } from '../../client/connection-settings';
import { loadToolsModuleExports, runWorkerProcess } from '../../runtime/create-worker';
import { MODEL_SETTINGS_HELP } from '../model-settings-help';
import { MCP_CONFIG_OPTION_HELP, MCP_CONFIG_OPTION_SPEC, mcpConfigOption } from '../mcp-config-option';
import { EXIT_CODES, type CliCommand } from '../command';
import { ensureServerReachable } from '../connect';
import { PARENT_WATCH_OPTION_HELP, PARENT_WATCH_OPTION_SPEC } from '../parent-watch';
import { startLocalServer } from '../local-server';
import { installRuntime } from '../runtime';
import { parseArgs, SERVER_OPTIONS_HELP } from '../server-args';
import { STACK_TRACES_OPTION_HELP, STACK_TRACES_OPTION_SPEC, stackTracesOption } from '../stack-traces-option';
import { TOOLS_OPTION_HELP, TOOLS_OPTION_SPEC, toolsModuleOption } from '../tools-option';

/** `durable-tools dev`: a local server with its UI and a worker, until Ctrl-C / SIGTERM. */
export const devCommand: CliCommand = {
  name: 'dev',
  help: `usage: durable-tools dev --tools <module> [options]

Starts a local Temporal dev server with its web UI, then a worker running the tools of a module, until
Ctrl-C or SIGTERM; then drains the worker and stops the server, in that order. With TEMPORAL_ADDRESS (or a
profile with an address) set, it starts no server and says so: the worker uses that server.
A taken port is an error, never silently reused.

options:
${TOOLS_OPTION_HELP}
${MCP_CONFIG_OPTION_HELP}
${SERVER_OPTIONS_HELP}
${STACK_TRACES_OPTION_HELP}
${PARENT_WATCH_OPTION_HELP}
  -h, --help      this help

${MODEL_SETTINGS_HELP}

exit codes: 0 stopped by Ctrl-C/SIGTERM after stopping everything, 1 something could not start, 2 bad arguments.
Through npm/npx, npm may report 130/143 instead of 0 (see docs/operations.md, "Exit codes").`,
  async run(argv, context) {
    const { options, help, values } = parseArgs(argv, context, {
      ...TOOLS_OPTION_SPEC,
      ...MCP_CONFIG_OPTION_SPEC,
      ...STACK_TRACES_OPTION_SPEC,
      ...PARENT_WATCH_OPTION_SPEC,
    });
    if (help) return (context.out(devCommand.help), EXIT_CODES.ok);
    if (values['no-parent-watch'] === true) context.lifecycle.stopWatchingParent();
    const toolsModule = toolsModuleOption(values, context);
    const workflowStackTraces = stackTracesOption(values, context);
    installRuntime();
    const { tools, mcp: moduleMcp } = await loadToolsModuleExports(toolsModule, context.cwd);
    const mcp = mcpConfigOption(values, context, moduleMcp);
    const settings = connectionSettingsFromEnv(context.env);
    let address = settings.address;
    if (settings.addressFromEnv) {
      context.out(`Using the Temporal server at ${address} (TEMPORAL_ADDRESS or profile): not starting one.`);
      await ensureServerReachable(settings, context);
    } else {
      const server = await startLocalServer(options, context);
      address = server.address;
      context.out(`Temporal server at ${address}, web UI at ${server.uiUrl ?? '(none)'} (started by this command).`);
      context.out(`Start runs against it with TEMPORAL_ADDRESS=${address} ${context.self} run "<goal>" ...`);
    }
    try {
      await runWorkerProcess({
        tools,
        ...(mcp ? { mcp } : {}),
        settings: { ...settings, address },
        workflowStackTraces,
        until: context.lifecycle.stopRequested,
        log: context.out,
      });
    } finally {
      await context.lifecycle.stopAll();
    }
    context.out('Stopped.');
    return EXIT_CODES.ok;
  },
};
