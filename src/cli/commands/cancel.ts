import { WorkflowNotFoundError } from '@temporalio/client';
import { waitForAgentRun } from '../../client/agent-run-client';
import { parseCommandArgs } from '../args';
import { EXIT_CODES, type CliCommand } from '../command';
import { connectForCommand } from '../connect';
import { startCommandTracing, traced } from '../command-tracing';

/** `durable-tools cancel <run>`: cancels a run; its compensations run before it ends. */
export const cancelCommand: CliCommand = {
  name: 'cancel',
  help: `usage: durable-tools cancel <workflow id> [--no-wait]

Asks a run to cancel. Running tool calls are cancelled, then the steps it did are compensated (newest first)
and the run ends cancelled (or compensation_failed). Waits for that end and prints the outcome, unless
--no-wait.

options:
  --no-wait       return once the cancellation is requested
  -h, --help      this help

exit codes: 0 cancelled (or requested, with --no-wait), 1 no such run, the run had already ended, or the
server is unreachable, 2 bad arguments`,
  async run(argv, context) {
    const { values, positionals, help } = parseCommandArgs(
      argv,
      { 'no-wait': { type: 'boolean' } },
      { min: 1, max: 1, names: '<workflow id>' },
    );
    if (help) return (context.out(cancelCommand.help), EXIT_CODES.ok);
    const workflowId = positionals[0]!;
    const tracing = await startCommandTracing(context, 'cancel');
    const { client } = await connectForCommand(context, { tracing });
    const handle = client.workflow.getHandle(workflowId);
    let description;
    try {
      description = await handle.describe();
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) {
        context.err(`No run ${workflowId}.`);
        return EXIT_CODES.error;
      }
      throw error;
    }
    if (description.status.name !== 'RUNNING') {
      context.err(`Run ${workflowId} has already ended (${description.status.name}); nothing to cancel.`);
      return EXIT_CODES.error;
    }
    // Traced inside the run's trace: the cancellation is a span of the run it cancels.
    await traced(tracing, client, { run: workflowId }, () => handle.cancel());
    if (values['no-wait'] === true) {
      context.out(`Cancellation of ${workflowId} requested.`);
      return EXIT_CODES.ok;
    }
    context.err(`Cancelling ${workflowId}; waiting for its compensations...`);
    const result = await waitForAgentRun(handle).catch(() => undefined);
    const final = await handle.describe();
    context.out(
      `Run ${workflowId}: ${result?.status ?? final.status.name.toLowerCase()}${result?.reason ? ` (${result.reason})` : ''}.`,
    );
    return EXIT_CODES.ok;
  },
};
