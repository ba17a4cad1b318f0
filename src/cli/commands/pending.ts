import { listPendingApprovals } from '../../client/approval-client';
import { parseCommandArgs, stringOption } from '../args';
import { EXIT_CODES, type CliCommand } from '../command';
import { connectForCommand } from '../connect';
import { pendingCallLines } from '../approval-view';

/** `durable-tools pending`: the tool calls waiting for a human decision. */
export const pendingCommand: CliCommand = {
  name: 'pending',
  help: `usage: durable-tools pending [--tool <name>] [--task-queue <queue>] [--run <id>] [--json]

Lists the tool calls waiting for a human decision, oldest first: run, step, tool, arguments, and the digest
(SHA-256 of the canonical JSON of the validated arguments) a decision is bound to. The runs are found by a
visibility query on the DurableAwaitingApproval search attribute (it lags a moment behind a run that just
started waiting); each run's waiting calls are read from its worker (getRunState query).

options:
  --tool <name>        only calls of this tool
  --task-queue <q>     only runs on this task queue
  --run <id>           only this run and its sub-agents (the calls of a sub-agent name its parent)
  --json               the calls as a JSON array
  -h, --help           this help

exit codes: 0 listed (also when nothing waits), 1 the server is unreachable or refused the query, 2 bad
arguments`,
  async run(argv, context) {
    const { values, help } = parseCommandArgs(argv, {
      tool: { type: 'string' },
      'task-queue': { type: 'string' },
      run: { type: 'string' },
      json: { type: 'boolean' },
    });
    if (help) return (context.out(pendingCommand.help), EXIT_CODES.ok);
    const tool = stringOption(values, 'tool');
    const taskQueue = stringOption(values, 'task-queue');
    const rootWorkflowId = stringOption(values, 'run');
    const { client } = await connectForCommand(context);
    const pending = await listPendingApprovals(client, {
      ...(tool !== undefined ? { tool } : {}),
      ...(taskQueue !== undefined ? { taskQueue } : {}),
      ...(rootWorkflowId !== undefined ? { rootWorkflowId } : {}),
      onUnreadable: (workflowId, error) =>
        context.err(
          `Run ${workflowId} waits for approval, but its calls could not be read (is its worker up?): ${error instanceof Error ? error.message : String(error)}`,
        ),
    });
    if (values.json === true) return (context.out(JSON.stringify(pending, null, 2)), EXIT_CODES.ok);
    if (pending.length === 0) return (context.out('No tool call is waiting for approval.'), EXIT_CODES.ok);
    for (const call of pending) for (const line of pendingCallLines(call)) context.out(line);
    context.out('');
    // Without $USER (as in many containers) `approve` needs to be told who decides.
    const approver = context.env.USER?.trim() ? '' : ' --approver <your name>';
    context.out(
      `${pending.length} call${pending.length === 1 ? '' : 's'} waiting. Decide with \`${context.self} approve <run> <step> --digest <digest>${approver}\` or \`${context.self} reject <run> <step> --reason <why>${approver}\`.`,
    );
    return EXIT_CODES.ok;
  },
};
