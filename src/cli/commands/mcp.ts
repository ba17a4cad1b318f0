import { MCP_COMMAND_USAGE, runMcpCommand } from '../../mcp/server/mcp-command';
import { CliUsageError, EXIT_CODES, type CliCommand } from '../command';
import { toolsModuleOption } from '../tools-option';

/**
 * `durable-tools mcp`: the MCP server command (`runMcpCommand`), stopped by Ctrl-C / SIGTERM or when the process
 * that started it goes away. Unlike `npm run mcp` inside this repository, it has no default tools module.
 */
export const mcpCommand: CliCommand = {
  name: 'mcp',
  help: `${MCP_COMMAND_USAGE}

exit codes: 0 stopped (Ctrl-C, SIGTERM, stdin closed), 1 an error, 2 bad arguments`,
  async run(argv, context) {
    if (argv.includes('--help') || argv.includes('-h')) return (context.out(mcpCommand.help), EXIT_CODES.ok);
    const toolsGiven = argv.some((arg) => arg === '--tools' || arg.startsWith('--tools='));
    const toolsModule = toolsGiven ? undefined : toolsModuleOption({}, context);
    const code = await runMcpCommand(toolsModule ? [...argv, '--tools', toolsModule] : argv, {
      until: context.lifecycle.stopRequested,
    });
    if (code === EXIT_CODES.usage) throw new CliUsageError('Bad arguments (see above).');
    return code;
  },
};
