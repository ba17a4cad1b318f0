import { connectionSettingsFromEnv } from '../../client/connection-settings';
import { loadToolsModuleExports, runWorkerProcess } from '../../runtime/create-worker';
import { MODEL_SETTINGS_HELP } from '../model-settings-help';
import { MCP_CONFIG_OPTION_HELP, MCP_CONFIG_OPTION_SPEC, mcpConfigOption } from '../mcp-config-option';
import { parseCommandArgs, stringOption } from '../args';
import { ensureServerReachable } from '../connect';
import { PARENT_WATCH_OPTION_HELP, PARENT_WATCH_OPTION_SPEC } from '../parent-watch';
import { CliUsageError, EXIT_CODES, type CliCommand } from '../command';
import { installRuntime } from '../runtime';
import { TOOLS_OPTION_HELP, TOOLS_OPTION_SPEC, toolsModuleOption } from '../tools-option';
import { PROMETHEUS_OPTION_HELP, PROMETHEUS_OPTION_SPEC, prometheusOption } from '../prometheus-option';
import { STACK_TRACES_OPTION_HELP, STACK_TRACES_OPTION_SPEC, stackTracesOption } from '../stack-traces-option';

/** `durable-tools worker`: a worker running the tools of a module, against the configured server. */
export const workerCommand: CliCommand = {
  name: 'worker',
  help: `usage: durable-tools worker --tools <module> [options]

Runs a worker for agent runs, the tools of a module and those of the MCP servers configured, until Ctrl-C or
SIGTERM, then drains it (running tool calls finish) and exits. Idempotency keys, transcripts and the audit trail
go to SQLite files in .data/ unless DURABLE_TOOLS_IDEMPOTENCY_STORE / DURABLE_TOOLS_TRANSCRIPT_STORE /
DURABLE_TOOLS_AUDIT_STORE say otherwise. It starts no server: it
connects to TEMPORAL_ADDRESS / the TEMPORAL_PROFILE of the Temporal config file (default 127.0.0.1:7233).

options:
${TOOLS_OPTION_HELP}
${MCP_CONFIG_OPTION_HELP}
  --task-queue <q> task queue to poll (default DURABLE_TOOLS_TASK_QUEUE or durable-tools)
${PROMETHEUS_OPTION_HELP}
${STACK_TRACES_OPTION_HELP}
${PARENT_WATCH_OPTION_HELP}
  -h, --help      this help

${MODEL_SETTINGS_HELP}

environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS*, TEMPORAL_PROFILE,
  TEMPORAL_CONFIG_FILE, DURABLE_TOOLS_TASK_QUEUE, DURABLE_TOOLS_TOOLS_MODULE, DURABLE_TOOLS_MCP_CONFIG, DURABLE_TOOLS_WORKFLOW_STACK_TRACES,
  DURABLE_TOOLS_PARENT_WATCH; OpenTelemetry traces and metrics
  from the standard OTEL_* variables (OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER, OTEL_EXPORTER_OTLP_ENDPOINT, ...)

exit codes: 0 stopped by Ctrl-C/SIGTERM after draining, 1 the worker failed (server unreachable, bad tools
module, ...), 2 bad arguments. Through npm/npx, npm may report 130/143 instead of 0 (see docs/operations.md, "Exit codes").`,
  async run(argv, context) {
    const { values, help } = parseCommandArgs(argv, {
      ...TOOLS_OPTION_SPEC,
      ...MCP_CONFIG_OPTION_SPEC,
      ...PROMETHEUS_OPTION_SPEC,
      ...STACK_TRACES_OPTION_SPEC,
      ...PARENT_WATCH_OPTION_SPEC,
      'task-queue': { type: 'string' },
    });
    if (help) return (context.out(workerCommand.help), EXIT_CODES.ok);
    if (values['no-parent-watch'] === true) context.lifecycle.stopWatchingParent();
    const toolsModule = toolsModuleOption(values, context);
    const prometheusBindAddress = prometheusOption(values, context);
    const workflowStackTraces = stackTracesOption(values, context);
    installRuntime(prometheusBindAddress ? { prometheusBindAddress } : {});
    const { tools, mcp: moduleMcp } = await loadToolsModuleExports(toolsModule, context.cwd);
    const mcp = mcpConfigOption(values, context, moduleMcp);
    const fromEnv = connectionSettingsFromEnv(context.env);
    const settings = { ...fromEnv, taskQueue: stringOption(values, 'task-queue', fromEnv.taskQueue)! };
    if (!settings.taskQueue.trim()) throw new CliUsageError('--task-queue must not be empty.');
    await ensureServerReachable(settings, context);
    await runWorkerProcess({
      tools,
      ...(mcp ? { mcp } : {}),
      settings,
      workflowStackTraces,
      until: context.lifecycle.stopRequested,
      log: context.out,
    });
    await context.lifecycle.stopAll();
    context.out('Worker stopped.');
    return EXIT_CODES.ok;
  },
};
