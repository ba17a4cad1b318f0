import type { AgentRunInput } from '../../contract/agent-run-types';
import type { ModelSettings } from '../../contract/model-types';
import { forkAgentRun, type ForkAgentRunOptions } from '../../client/fork-agent-run';
import { parseCommandArgs, stringOption, type ParsedValues } from '../args';
import { CliUsageError, EXIT_CODES, type CliCommand, type CliContext } from '../command';
import { connectForCommand } from '../connect';
import { startCommandTracing, traced } from '../command-tracing';
import { modelSettings, readJson, scriptedTurnsFile } from './run';

/** `durable-tools fork <run> --from-step N`: a new run from another run's recorded steps. */
export const forkCommand: CliCommand = {
  name: 'fork',
  help: `usage: durable-tools fork <workflow id> --from-step <n> [--script <turns.json> | --model <m>] [options]
       durable-tools fork <workflow id> --dry-run [--from-step <n>] [--script <turns.json> | --model <m>] [options]

Starts a NEW run that takes steps 1 to n-1 from a finished run as it recorded them (no tool runs and no
model is asked for them again) and goes on from step n with the given model, goal and input, against the
tools the workers have now. Steps from n on are the new run's own: their effects get the new run's keys and
only they are compensated by it; the forked steps stay the source run's (docs/fork.md). Prints the new
run's id; follow it with \`show\`.

With --dry-run nothing with effects runs from step n on (default n = 1: a dry re-run of the whole run): each
call of a tool with effects is answered from the source's recorded call of the same tool with the same
validated arguments, or refused with DRY_RUN_NO_RECORD; the tool's code never runs. Nobody is asked for
approval and nothing is compensated.

options:
  --from-step <n>     the first step the new run takes itself (1: nothing is taken from the source)
  --script <file>     the offline "scripted" model from step n on (a JSON array of turns, as for \`run\`). It
                      plays its turn k at the run's model turn k, counted from the source's first turn
  --model <m>         model settings: a JSON file or inline JSON ({"provider": ...}), or a provider name
                      (default: the source's model)
  --goal <text>       the new run's goal (default: the source's)
  --input <file>      JSON file with run input fields that replace the source's (limits, allowedTools, ...)
  --id <id>           workflow id of the new run (default agent-run-<uuid>)
  --task-queue <q>    task queue of the new run (default: the source's)
  --dry-run           answer calls with effects from the source's record, never run them (see above)
  --read-only-tools <run|record>
                      in a dry run: run read-only tools for real (run, default) or answer them from the
                      record too (record)
  -h, --help          this help

exit codes: 0 the new run started, 1 the source is unknown, still running or has fewer than n-1 steps, a
run with --id exists already (nothing is started), or the server is unreachable, 2 bad arguments`,
  async run(argv, context) {
    const { values, positionals, help } = parseCommandArgs(
      argv,
      {
        'from-step': { type: 'string' },
        script: { type: 'string' },
        model: { type: 'string' },
        goal: { type: 'string' },
        input: { type: 'string' },
        id: { type: 'string' },
        'task-queue': { type: 'string' },
        'dry-run': { type: 'boolean' },
        'read-only-tools': { type: 'string' },
      },
      { min: 1, max: 1, names: '<workflow id>' },
    );
    if (help) return (context.out(forkCommand.help), EXIT_CODES.ok);
    const source = positionals[0]!;
    const options = forkOptions(values, context);
    const tracing = await startCommandTracing(context, 'fork');
    const { client } = await connectForCommand(context, { tracing });
    // A new run, so a new trace (or the caller's, TRACEPARENT), linked to the trace of the run it forks.
    const handle = await traced(tracing, client, { linkTo: source }, () => forkAgentRun(client, source, options));
    if (!handle.started) {
      context.out(`Run ${handle.workflowId} already exists; nothing was started.`);
      return EXIT_CODES.error;
    }
    context.out(startedLine(handle.workflowId, source, options));
    context.out(`Follow it with: ${context.self} show ${handle.workflowId}`);
    return EXIT_CODES.ok;
  },
};

/** The options of `forkAgentRun` from the command line. */
function forkOptions(values: ParsedValues, context: CliContext): ForkAgentRunOptions {
  const dry = values['dry-run'] === true;
  const readOnlyTools = stringOption(values, 'read-only-tools');
  if (readOnlyTools !== undefined && !dry) throw new CliUsageError('--read-only-tools goes with --dry-run.');
  if (readOnlyTools !== undefined && readOnlyTools !== 'run' && readOnlyTools !== 'record') {
    throw new CliUsageError(`--read-only-tools must be run or record (got ${JSON.stringify(readOnlyTools)}).`);
  }
  const fromStepText = stringOption(values, 'from-step') ?? (dry ? '1' : undefined);
  if (fromStepText === undefined) throw new CliUsageError('fork needs --from-step <n> (or --dry-run).');
  const fromStep = Number(fromStepText);
  if (!/^\d+$/.test(fromStepText) || fromStep < 1) {
    throw new CliUsageError(`--from-step must be a whole number of at least 1 (got ${JSON.stringify(fromStepText)}).`);
  }
  const model = forkModel(values, context);
  const inputFile = stringOption(values, 'input');
  const input = inputFile === undefined ? undefined : readJson(inputFile, context, '--input');
  if (input !== undefined && (typeof input !== 'object' || input === null || Array.isArray(input))) {
    throw new CliUsageError('--input must be a JSON object of run input fields.');
  }
  const goal = stringOption(values, 'goal');
  const id = stringOption(values, 'id');
  const taskQueue = stringOption(values, 'task-queue');
  return {
    fromStep,
    ...(model ? { model } : {}),
    ...(goal !== undefined ? { goal } : {}),
    ...(input ? { input: input as Partial<AgentRunInput> } : {}),
    ...(id !== undefined ? { workflowId: id } : {}),
    ...(taskQueue !== undefined ? { taskQueue } : {}),
    ...(dry ? { dryRun: readOnlyTools ? { readOnlyTools } : true } : {}),
  };
}

/** What `fork` prints once the new run started. */
function startedLine(workflowId: string, source: string, options: ForkAgentRunOptions): string {
  const taken = options.fromStep > 1 ? `steps 1-${options.fromStep - 1} taken from ${source}` : undefined;
  if (!options.dryRun) return `Run ${workflowId} started: ${taken ?? `nothing taken from ${source}`}.`;
  const dry = `calls with effects answered from the record of ${source}, never run`;
  return `Dry run ${workflowId} started: ${taken ? `${taken}, then ` : ''}${dry}.`;
}

function forkModel(values: ParsedValues, context: CliContext): ModelSettings | undefined {
  const script = stringOption(values, 'script');
  if (script !== undefined) return { provider: 'scripted', script: scriptedTurnsFile(script, context) };
  const model = stringOption(values, 'model');
  return model === undefined ? undefined : modelSettings(model, context);
}
