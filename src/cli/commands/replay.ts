import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { DefaultLogger, makeTelemetryFilterString, Runtime } from '@temporalio/worker';
import {
  DEFAULT_REPLAY_LIMIT,
  replayAgentRuns,
  type AgentRunReplayResult,
  type AgentRunsReplayReport,
} from '../../runtime/replay-agent-runs';
import { ReplayAgentRunsError } from '../../runtime/replay-agent-runs-error';
import { parseCommandArgs, positiveIntOption, stringOption } from '../args';
import { CliUsageError, EXIT_CODES, type CliCommand } from '../command';
import { connectForCommand } from '../connect';

/** `durable-tools replay`: replays recorded runs against the current workflow code before a deploy. */
export const replayCommand: CliCommand = {
  name: 'replay',
  help: `usage: durable-tools replay <workflow id...> [--run-id <id>] [--workflows <path>] [--json]
       durable-tools replay --query "<visibility query>" [--limit <n>] [--workflows <path>] [--json]

Determinism check before a deploy: fetches the recorded histories of runs from the Temporal server and
replays them with Temporal's replayer against the current workflow code (nothing is written, no tool runs).
Prints one line per run as it is replayed, ok or the first nondeterminism with its event, then a summary.

options:
  --query <q>       the runs a Temporal visibility query matches, e.g.
                    "WorkflowType = 'agentRun' AND CloseTime > '2026-01-01T00:00:00Z'"
  --limit <n>       with --query: at most n runs, newest first (default ${DEFAULT_REPLAY_LIMIT})
  --run-id <id>     with one workflow id: that run of it (default: its latest run)
  --workflows <p>   the workflow module to replay against (default: durable-tools' own workflows)
  --json            print the report as one JSON object
  -h, --help        this help

exit codes: 0 every run replays, 1 a run is nondeterministic or could not be replayed (or the server is
unreachable, or refused the query), 2 bad arguments`,
  async run(argv, context) {
    const { values, positionals, help } = parseCommandArgs(
      argv,
      {
        query: { type: 'string' },
        limit: { type: 'string' },
        'run-id': { type: 'string' },
        workflows: { type: 'string' },
        json: { type: 'boolean' },
      },
      { min: 0, max: Number.MAX_SAFE_INTEGER, names: '<workflow id...>' },
    );
    if (help) return (context.out(replayCommand.help), EXIT_CODES.ok);
    const selection = replaySelection(positionals, values);
    const workflowsPath = workflowsOption(stringOption(values, 'workflows'), context.cwd);
    const json = values.json === true;
    const { client } = await connectForCommand(context);
    installQuietRuntimeIfNone();
    context.err(`Replaying against ${workflowsPath ?? "durable-tools' workflows"} (the code is bundled first)...`);
    let report: AgentRunsReplayReport;
    try {
      report = await replayAgentRuns(client, {
        ...selection,
        ...(workflowsPath ? { workflowsPath } : {}),
        onResult: (result) => (json ? context.err : context.out)(resultLine(result)),
      });
    } catch (error) {
      if (error instanceof ReplayAgentRunsError && error.code === 'QUERY_REJECTED') {
        context.err(error.message);
        return EXIT_CODES.error;
      }
      throw error;
    }
    if (report.replayed === 0) context.err('No run matches the query: nothing was replayed.');
    const summary = `replayed ${report.replayed}, nondeterministic ${report.nondeterministic}, failed ${report.failed}`;
    if (json) context.out(JSON.stringify(report, null, 2));
    else context.out(summary);
    if (json) context.err(summary);
    return report.nondeterministic + report.failed > 0 ? EXIT_CODES.error : EXIT_CODES.ok;
  },
};

/** Workflow ids or a query (with its limit), checked against each other. */
function replaySelection(
  positionals: string[],
  values: Parameters<typeof stringOption>[0],
): { workflowIds: string[]; runId?: string } | { query: string; limit: number } {
  const query = stringOption(values, 'query');
  const runId = stringOption(values, 'run-id');
  if (query !== undefined) {
    if (positionals.length > 0) throw new CliUsageError('Give workflow ids or --query, not both.');
    if (runId !== undefined) throw new CliUsageError('--run-id goes with one workflow id, not with --query.');
    if (query.trim() === '') throw new CliUsageError('--query is empty.');
    return { query, limit: positiveIntOption(values, 'limit', DEFAULT_REPLAY_LIMIT) };
  }
  if (positionals.length === 0) throw new CliUsageError('Missing argument: <workflow id...> or --query.');
  if (values.limit !== undefined) throw new CliUsageError('--limit goes with --query.');
  if (runId !== undefined && positionals.length !== 1) {
    throw new CliUsageError('--run-id goes with exactly one workflow id.');
  }
  return { workflowIds: positionals, ...(runId !== undefined ? { runId } : {}) };
}

/** The `--workflows` module, resolved from the working directory; a path that does not exist is a usage error. */
function workflowsOption(path: string | undefined, cwd: string): string | undefined {
  if (path === undefined) return undefined;
  const resolved = isAbsolute(path) ? path : resolve(cwd, path);
  const candidates = [resolved, ...['.ts', '.js', '/index.ts', '/index.js'].map((ext) => `${resolved}${ext}`)];
  if (!candidates.some((candidate) => existsSync(candidate))) {
    throw new CliUsageError(`--workflows: no workflow module at ${resolved}.`);
  }
  return resolved;
}

/** `<workflow id>  run <run id>  ok` or `... nondeterministic at event 5 (TimerStarted): <message>`. */
export function resultLine(result: AgentRunReplayResult): string {
  const run = `${result.workflowId}  run ${result.runId ?? '-'}`;
  if (result.outcome === 'ok') return `${run}  ok`;
  const at = result.event ? ` at event ${result.event.eventId} (${result.event.eventType})` : '';
  return `${run}  ${result.outcome}${at}: ${result.message ?? 'no message'}`;
}

/**
 * The replay worker's own log lines (worker started, workflow task failed, ...) repeat what the report says:
 * only errors are printed, unless the process installed its own runtime.
 */
function installQuietRuntimeIfNone(): void {
  if (Runtime._instance !== undefined) return;
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } },
  });
}
