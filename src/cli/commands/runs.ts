import { AGENT_RUN_WORKFLOW } from '../../client/agent-run-client';
import { SEARCH_ATTRIBUTES } from '../../contract/search-attributes';
import type { RunStatus } from '../../contract/agent-run-types';
import { parseCommandArgs, positiveIntOption, stringOption } from '../args';
import { CliUsageError, EXIT_CODES, type CliCommand } from '../command';
import { connectForCommand } from '../connect';
import { preview, table } from '../run-view';

const RUN_STATUSES: readonly RunStatus[] = [
  'running',
  'completed',
  'failed',
  'compensated',
  'compensation_failed',
  'cancelled',
];

/** `durable-tools runs`: the latest runs with their status, filterable. */
export const runsCommand: CliCommand = {
  name: 'runs',
  help: `usage: durable-tools runs [--status <status>] [--query <visibility query>] [--limit <n>] [--json]

Lists agent runs, newest first: workflow id, status (DurableRunStatus: ${RUN_STATUSES.join(', ')}),
the workflow's own status, start time and goal.

options:
  --status <s>    only runs with this status (needs the DurableRunStatus search attribute)
  --query <q>     an extra Temporal visibility query, e.g. "StartTime > '2026-01-01T00:00:00Z'"
  --limit <n>     at most n runs (default 20)
  --json          one JSON object per run: { workflowId, status, workflowStatus, startedAt, goal }, and runId
                  (deprecated: the workflow id again, under its old name)
  -h, --help      this help

exit codes: 0 listed (also when none match), 1 the server is unreachable or refused the query, 2 bad arguments`,
  async run(argv, context) {
    const { values, help } = parseCommandArgs(argv, {
      status: { type: 'string' },
      query: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
    });
    if (help) return (context.out(runsCommand.help), EXIT_CODES.ok);
    const status = stringOption(values, 'status');
    if (status !== undefined && !RUN_STATUSES.includes(status as RunStatus)) {
      throw new CliUsageError(`--status must be one of ${RUN_STATUSES.join(', ')}, not "${status}".`);
    }
    const limit = positiveIntOption(values, 'limit', 20);
    const clauses = [`WorkflowType = '${AGENT_RUN_WORKFLOW}'`];
    if (status) clauses.push(`${SEARCH_ATTRIBUTES.runStatus.name} = '${status}'`);
    const extra = stringOption(values, 'query');
    if (extra) clauses.push(`(${extra})`);
    const { client } = await connectForCommand(context);
    const rows: Array<{ workflowId: string; status: string; workflowStatus: string; startedAt: string; goal: string }> =
      [];
    for await (const info of client.workflow.list({ query: clauses.join(' AND '), pageSize: limit })) {
      const runStatus = info.typedSearchAttributes.get(SEARCH_ATTRIBUTES.runStatus);
      const summary = await client.workflow
        .getHandle(info.workflowId, info.runId)
        .describe()
        .then((d) => d.staticSummary())
        .catch(() => undefined);
      rows.push({
        workflowId: info.workflowId,
        status: runStatus ?? '-',
        workflowStatus: info.status.name,
        startedAt: info.startTime.toISOString(),
        goal: (summary ?? '').replace(/^Agent run: /, ''),
      });
      if (rows.length >= limit) break;
    }
    if (values.json === true) {
      // `runId`: the workflow id under the name older readers of this output know it by.
      for (const row of rows) context.out(JSON.stringify({ ...row, runId: row.workflowId }));
      return EXIT_CODES.ok;
    }
    if (rows.length === 0) {
      context.out(status ? `No runs with status ${status}.` : 'No runs.');
      return EXIT_CODES.ok;
    }
    context.out(
      table(
        ['workflow id', 'status', 'workflow', 'started', 'goal'],
        rows.map((r) => [r.workflowId, r.status, r.workflowStatus, r.startedAt, preview(r.goal, 60)]),
      ),
    );
    return EXIT_CODES.ok;
  },
};
