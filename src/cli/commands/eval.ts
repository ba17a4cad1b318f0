import { writeFileSync } from 'node:fs';
import { basename, extname, isAbsolute, resolve } from 'node:path';
import { evalSuiteProblems, type EvalSuite } from '../../client/eval-suite';
import { EVAL_DEFAULT_CONCURRENCY, evaluateAgentRuns } from '../../client/evaluate-agent-runs';
import { enableTypeScriptFor } from '../../runtime/typescript-tools-module';
import { parseCommandArgs, positiveIntOption, stringOption } from '../args';
import { CliUsageError, EXIT_CODES, type CliCommand, type CliContext } from '../command';
import { connectForCommand } from '../connect';
import { startCommandTracing, traced } from '../command-tracing';
import { evalSummary } from '../eval-view';
import { junitXml } from '../junit-xml';

/** `durable-tools eval <suite>`: recorded runs re-run dry against the current model and tools, scored. */
export const evalCommand: CliCommand = {
  name: 'eval',
  help: `usage: durable-tools eval <suite module> [--concurrency <n>] [--junit <file>] [--json <file>]

Evaluates the current model, prompt and tools on recorded runs. The suite module (a .js, or a .ts loaded with
the tsx of your project, like --tools modules) exports \`suite\` (or a default export):
  runs        workflow ids, or { query: '<visibility query>', limit? } (dry runs it finds are skipped)
  model       the model to evaluate (default: each run's own), or (source) => model settings
  goal        the prompt (default: each run's own), or (source) => text
  input       run input fields that replace the recorded runs' (limits, allowedTools, ...)
  scorers     { name: ({ source, rerun }) => true | false | score | { score, pass?, message? } }
  thresholds  { name: minimum mean score } (a scorer without one must pass on every run)
Each run is re-run DRY (fork --dry-run from step 1): no call with effects runs, each is answered from the
recorded run or refused with DRY_RUN_NO_RECORD (docs/fork.md). Prints a table of runs x scorers and the
scorers against their thresholds.

options:
  --concurrency <n>   recorded runs re-run at once (default ${EVAL_DEFAULT_CONCURRENCY})
  --junit <file>      write JUnit XML: one testcase per run x scorer, and one per threshold
  --json <file>       write the whole report as JSON
  -h, --help          this help

exit codes: 0 every threshold met, 1 a threshold not met (or a run could not be re-run, or the server is
unreachable), 2 bad arguments or a malformed suite`,
  async run(argv, context) {
    const { values, positionals, help } = parseCommandArgs(
      argv,
      { concurrency: { type: 'string' }, junit: { type: 'string' }, json: { type: 'string' } },
      { min: 1, max: 1, names: '<suite module>' },
    );
    if (help) return (context.out(evalCommand.help), EXIT_CODES.ok);
    const concurrency = positiveIntOption(values, 'concurrency', EVAL_DEFAULT_CONCURRENCY);
    const junit = stringOption(values, 'junit');
    const json = stringOption(values, 'json');
    const path = modulePath(positionals[0]!, context);
    const suite = await loadSuite(path, context);
    const tracing = await startCommandTracing(context, 'eval');
    const { client } = await connectForCommand(context, { tracing });
    // One trace for the evaluation: each dry re-run starts below its span.
    const report = await traced(tracing, client, {}, () =>
      evaluateAgentRuns(client, suite, {
        concurrency,
        name: basename(path, extname(path)),
        onRun: (run) => context.err(`${run.sourceId}: ${run.error ? `error: ${run.error}` : (run.status ?? '')}`),
      }),
    );
    context.out(evalSummary(report));
    if (junit !== undefined) writeFileSync(resolve(context.cwd, junit), junitXml(report));
    if (json !== undefined) writeFileSync(resolve(context.cwd, json), `${JSON.stringify(report, null, 2)}\n`);
    return report.passed ? EXIT_CODES.ok : EXIT_CODES.error;
  },
};

function modulePath(module: string, context: CliContext): string {
  return isAbsolute(module) ? module : resolve(context.cwd, module);
}

/** The suite the module exports (`suite`, else its default export); a usage error when it has none or it is malformed. */
async function loadSuite(path: string, context: CliContext): Promise<EvalSuite> {
  enableTypeScriptFor(path, context.cwd);
  let loaded: { suite?: unknown; default?: unknown };
  try {
    loaded = (await import(path)) as { suite?: unknown; default?: unknown };
  } catch (error) {
    throw new CliUsageError(
      `Could not load the suite module ${path}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const defaultExport = loaded.default as { suite?: unknown } | undefined;
  const suite = loaded.suite ?? defaultExport?.suite ?? loaded.default;
  const problems = evalSuiteProblems(suite);
  if (problems.length > 0)
    throw new CliUsageError(`${path} does not export a valid \`suite\`: ${problems.join('; ')}.`);
  return suite as EvalSuite;
}
