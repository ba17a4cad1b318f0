import { WorkflowNotFoundError } from '@temporalio/client';
import { parseCommandArgs } from '../args';
import type { CliCommand, CliContext } from '../command';
import { connectForCommand } from '../connect';
import { diffAgentRuns } from '../../client/diff-agent-runs';
import { diffText } from '../diff-view';

/** Exit codes of `diff`, as `diff(1)` has them: same, different, trouble. */
export const DIFF_EXIT_CODES = { same: 0, diverge: 1, trouble: 2 } as const;

/** `durable-tools diff <run a> <run b>`: two runs' steps side by side, the first divergence marked. */
export const diffCommand: CliCommand = {
  name: 'diff',
  help: `usage: durable-tools diff <run a> <run b> [--json]

Compares two runs (their workflow ids) step by step: for each step id, each run's tool, arguments (as the
run recorded them: sensitive fields redacted, long ones shortened), status, outcome (ok or the error code),
and the tokens and cost of the model turn that proposed the call. The first step where the tool, the
arguments or the outcome differ, or that only one run has, is marked '>' and named in the last line:
"first divergence: step 2 (arguments differ)" or "no divergence". Runs are read as \`show\` reads them.

options:
  --json          print the diff as JSON (firstDivergence: the step id, or null)
  -h, --help      this help

exit codes: as diff(1), 0 no divergence, 1 the runs diverge, 2 bad arguments, no such run, or the server is
unreachable`,
  async run(argv, context) {
    const { values, positionals, help } = parseCommandArgs(
      argv,
      { json: { type: 'boolean' } },
      { min: 2, max: 2, names: '<run a> <run b>' },
    );
    if (help) return (context.out(diffCommand.help), DIFF_EXIT_CODES.same);
    try {
      return await printDiff(positionals[0]!, positionals[1]!, values.json === true, context);
    } catch (error) {
      // diff(1) keeps 1 for "they differ": every trouble is 2.
      context.err(`durable-tools diff: ${error instanceof Error ? error.message : String(error)}`);
      return DIFF_EXIT_CODES.trouble;
    }
  },
};

async function printDiff(workflowIdA: string, workflowIdB: string, json: boolean, context: CliContext) {
  const { client, settings } = await connectForCommand(context);
  let diff;
  try {
    diff = await diffAgentRuns(client, workflowIdA, workflowIdB);
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) {
      const missing = error.workflowId || `${workflowIdA} or ${workflowIdB}`;
      context.err(`No run ${missing} in namespace ${settings.namespace} at ${settings.address}.`);
      return DIFF_EXIT_CODES.trouble;
    }
    throw error;
  }
  context.out(json ? JSON.stringify(diff, null, 2) : diffText(diff));
  return diff.firstDivergence === null ? DIFF_EXIT_CODES.same : DIFF_EXIT_CODES.diverge;
}
