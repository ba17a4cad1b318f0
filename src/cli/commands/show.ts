import { WorkflowNotFoundError } from '@temporalio/client';
import { parseCommandArgs } from '../args';
import { EXIT_CODES, type CliCommand } from '../command';
import { connectForCommand } from '../connect';
import { temporalShowCommand } from '../hints';
import { readRun } from '../../client/read-run';
import { withLiveProgress } from '../../long-calls/live-progress';
import { outputWidth, runSummary, stepsTable } from '../run-view';

/** `durable-tools show <run>`: a run's outcome and its steps table. */
export const showCommand: CliCommand = {
  name: 'show',
  help: `usage: durable-tools show <workflow id> [--json]

Shows a run (its workflow id): goal, status, why it stopped, and a table of its tool calls with arguments,
status, attempts and observation. A finished run is read from its history; a running or cancelled run from
its worker (getRunState query), or, when no worker answers within 5 s, from the history's tool calls.

options:
  --json          print the run's state as JSON
  -h, --help      this help

exit codes: 0 shown, 1 no such run or the server is unreachable, 2 bad arguments`,
  async run(argv, context) {
    const { values, positionals, help } = parseCommandArgs(
      argv,
      { json: { type: 'boolean' } },
      { min: 1, max: 1, names: '<workflow id>' },
    );
    if (help) return (context.out(showCommand.help), EXIT_CODES.ok);
    const workflowId = positionals[0]!;
    const { client, settings } = await connectForCommand(context);
    let view;
    try {
      view = await readRun(client, workflowId);
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) {
        context.err(`No run ${workflowId} in namespace ${settings.namespace} at ${settings.address}.`);
        return EXIT_CODES.error;
      }
      throw error;
    }
    const { description, historySteps } = view;
    // A running call's progress and wait (a slot of its tool's limits, a breaker's pause) from its heartbeat.
    const state = view.state && (await withLiveProgress(client, view.state));
    if (values.json === true) {
      context.out(
        JSON.stringify(state ?? { workflowId, status: description.status.name, steps: historySteps }, null, 2),
      );
      return EXIT_CODES.ok;
    }
    context.out(
      `run:     ${workflowId}  (workflow ${description.status.name}, started ${description.startTime.toISOString()})`,
    );
    const width = outputWidth(context.interactive);
    if (state) {
      for (const line of runSummary(state, width)) context.out(line);
      context.out('');
      context.out(stepsTable(state.steps, width));
    } else {
      context.out('(no worker answered: the tool calls below are read from the history)');
      context.out('');
      context.out(stepsTable(historySteps ?? [], width));
    }
    const temporalShow = await temporalShowCommand(settings.address, settings.namespace, workflowId, context.env);
    if (temporalShow) context.out(`\nFull history: ${temporalShow}`);
    return EXIT_CODES.ok;
  },
};
