import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { agentRunUrl, getAgentRunState, startAgentRun, waitForAgentRun } from '../../client/agent-run-client';
import type { ModelSettings } from '../../contract/model-types';
import type { ScriptedTurn } from '../../model/scripted-model';
import { parseScriptedTurns, ScriptedTurnsError } from '../../model/scripted-turns';
import type { AgentRunInput, AgentRunResult, AgentRunState } from '../../contract/agent-run-types';
import { parseCommandArgs, stringOption, type ParsedValues } from '../args';
import { CliUsageError, EXIT_CODES, type CliCommand, type CliContext } from '../command';
import { connectForCommand } from '../connect';
import { startCommandTracing, traced } from '../command-tracing';
import { temporalShowCommand } from '../hints';
import { LiveSteps, outputWidth, progressLine, runSummary } from '../run-view';
import { scriptToolWarning } from '../script-tool-check';
import { subAgentApprovalLine, subAgentApprovalWaits } from '../sub-agent-approvals';
import { streamAgentRun } from '../../client/stream-agent-run';
import { StreamView } from '../stream-view';
import { openCommandStreamStore } from '../stream-store';

/** The smallest useful script, shown by `run --help` and by the error for a bad script file. */
const MINIMAL_SCRIPT =
  '[{"toolCalls": [{"name": "search_flights", "arguments": {"from": "LIS", "to": "BER"}}]}, {"text": "Found a flight.", "final": true}]';

/** How often `run` reads the run's state while it watches. */
export const RUN_WATCH_TIMING = {
  pollIntervalMs: 250,
  noWorkerWarningMs: 5_000,
  /** Off a terminal: how long step lines wait for their turn's streamed text (the worker streams). */
  textGraceMs: 5_000,
  /** The same, while nothing came from the stream yet (the worker may not stream at all). */
  noTextGraceMs: 1_000,
} as const;

/** `durable-tools run <goal>`: starts a run and shows its steps live until it ends. */
export const runCommand: CliCommand = {
  name: 'run',
  help: `usage: durable-tools run <goal> (--script <turns.json> | --model <settings.json|provider>) [options]

Starts an agent run on the configured server (TEMPORAL_ADDRESS, default 127.0.0.1:7233) and prints each tool
call as it starts and ends, with a progress line, until the run ends. Ctrl-C stops watching (the run goes on;
\`cancel\` cancels it). A worker must be running the tools (\`durable-tools dev\` or \`worker\`).

options:
  --script <file>     the offline "scripted" model: a JSON file with the turns it plays, in order. A turn has
                      "text", "toolCalls" ([{"name", "arguments"}]), "final" (ends the run with "text") and
                      "ifPreviousFailed" (a turn played instead when a call of the previous turn failed):
                        [{"toolCalls": [{"name": "search_flights", "arguments": {"from": "LIS", "to": "BER"}}]},
                         {"text": "Found a flight.", "final": true}]
                      examples/trip-turns.json in the repository runs against \`npm run dev\`
  --model <m>         model settings: a JSON file or inline JSON ({"provider": ...}), or a provider name
  --input <file>      JSON file with more run input (limits, failurePolicy, allowedTools, parallelToolCalls, ...)
  --id <id>           workflow id of the run (default agent-run-<uuid>). An id names one run: when a run
                      with it exists (running or closed), nothing starts and that run is shown
  --reuse-failed-id   with --id: the id of a run that did not complete (failed, compensated, cancelled,
                      terminated) may start a new run, which never sees the earlier run's effects
  --task-queue <q>    task queue of the workers (default DURABLE_TOOLS_TASK_QUEUE or durable-tools)
  --ui <url>          web UI base URL for the link to the run (default TEMPORAL_UI_URL)
  --detach            start the run, print its id and return
  --no-stream         do not print the model's text as it is generated (read from the stream store the workers
                      write: DURABLE_TOOLS_STREAM_STORE, default sqlite at .data/streams.sqlite; on a terminal the
                      text appears live, elsewhere each turn's text once it is complete)
  -h, --help          this help

exit codes: 0 the run completed (or started, with --detach), 3 it ended failed, compensated,
compensation_failed or cancelled, 1 it could not be started or read, 2 bad arguments, 130 Ctrl-C`,
  async run(argv, context) {
    const { values, positionals, help } = parseCommandArgs(
      argv,
      {
        script: { type: 'string' },
        model: { type: 'string' },
        input: { type: 'string' },
        id: { type: 'string' },
        'task-queue': { type: 'string' },
        ui: { type: 'string' },
        detach: { type: 'boolean' },
        'reuse-failed-id': { type: 'boolean' },
        'no-stream': { type: 'boolean' },
      },
      { min: 1, max: 1, names: '<goal>' },
    );
    if (help) return (context.out(runCommand.help), EXIT_CODES.ok);
    const input = runInput(positionals[0]!, values, context);
    const tracing = await startCommandTracing(context, 'run');
    const { client, settings } = await connectForCommand(context, { tracing });
    const taskQueue = stringOption(values, 'task-queue', settings.taskQueue)!;
    const id = stringOption(values, 'id');
    if (values['reuse-failed-id'] === true && !id)
      throw new CliUsageError('--reuse-failed-id needs --id <id> (a workflow id).');
    if (input.model.provider === 'scripted' && Array.isArray(input.model.script)) {
      const warning = await scriptToolWarning(client, taskQueue, input.model.script as ScriptedTurn[]);
      if (warning) context.err(warning);
    }
    // Traced: the run's trace starts here (or in the caller's, TRACEPARENT); watching it is not traced.
    const handle = await traced(tracing, client, {}, () =>
      startAgentRun(client, input, {
        taskQueue,
        ...(id ? { workflowId: id } : {}),
        ...(values['reuse-failed-id'] === true
          ? { workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY' as const }
          : {}),
      }),
    );
    const uiBase = stringOption(values, 'ui', context.env.TEMPORAL_UI_URL || undefined);
    if (handle.started) context.out(`Run ${handle.workflowId} started on task queue "${taskQueue}".`);
    else {
      // The id names one run: a second start shows that run and starts nothing (its input is not used).
      const { status } = await handle.describe();
      context.out(`Run ${handle.workflowId} already exists (${status.name.toLowerCase()}); nothing was started.`);
    }
    if (uiBase) context.out(`Web UI: ${agentRunUrl(uiBase, settings.namespace, handle.workflowId)}`);
    if (values.detach === true) {
      context.out(`Follow it with: ${context.self} show ${handle.workflowId}`);
      return EXIT_CODES.ok;
    }
    const result = await watch(client, handle, taskQueue, context, values['no-stream'] !== true);
    if (!result) {
      context.out(
        `\nStopped watching; the run goes on. ${context.self} show ${handle.workflowId} | ${context.self} cancel ${handle.workflowId}`,
      );
      return EXIT_CODES.sigint;
    }
    context.out('');
    for (const line of runSummary(result, outputWidth(context.interactive))) context.out(line);
    context.out(`Steps: ${context.self} show ${handle.workflowId}`);
    const temporalShow = await temporalShowCommand(
      settings.address,
      settings.namespace,
      handle.workflowId,
      context.env,
    );
    if (temporalShow) context.out(`History: ${temporalShow}`);
    return result.status === 'completed' ? EXIT_CODES.ok : EXIT_CODES.runNotCompleted;
  },
};

/** The run's input from the goal and the options. */
function runInput(goal: string, values: ParsedValues, context: CliContext): AgentRunInput {
  const extra = values.input
    ? (readJson(stringOption(values, 'input')!, context, '--input') as Partial<AgentRunInput>)
    : {};
  if (typeof extra !== 'object' || extra === null || Array.isArray(extra)) {
    throw new CliUsageError('--input must be a JSON object of run input fields.');
  }
  let model: ModelSettings | undefined = extra.model;
  const script = stringOption(values, 'script');
  const modelOption = stringOption(values, 'model');
  if (script !== undefined) {
    model = { provider: 'scripted', script: scriptedTurnsFile(script, context) };
  } else if (modelOption !== undefined) {
    model = modelSettings(modelOption, context);
  }
  if (!model) {
    throw new CliUsageError('A run needs a model: pass --script <turns.json> (offline) or --model <settings>.');
  }
  return { ...extra, goal, model };
}

/** The turns of a `--script` file, checked against the scripted turn format (problems named by path). */
export function scriptedTurnsFile(path: string, context: CliContext): ScriptedTurn[] {
  const turns = readJson(path, context, '--script');
  try {
    return parseScriptedTurns(turns);
  } catch (error) {
    if (!(error instanceof ScriptedTurnsError)) throw error;
    throw new CliUsageError(
      `--script ${path}: ${error.message}\nA script is a JSON array of turns, e.g. ${MINIMAL_SCRIPT}`,
    );
  }
}

/** The `--model` option: inline JSON settings, a JSON file, or a provider name. */
export function modelSettings(option: string, context: CliContext): ModelSettings {
  const trimmed = option.trim();
  const parsed: unknown = trimmed.startsWith('{')
    ? parseJson(trimmed, '--model')
    : /\.json$/i.test(trimmed)
      ? readJson(trimmed, context, '--model')
      : { provider: trimmed };
  if (typeof parsed !== 'object' || parsed === null || typeof (parsed as ModelSettings).provider !== 'string') {
    throw new CliUsageError('--model must name a provider or be JSON settings with a "provider" field.');
  }
  return parsed as ModelSettings;
}

/** A JSON file named on the command line (relative to the working directory); a usage error names the flag. */
export function readJson(path: string, context: CliContext, flag: string): unknown {
  let text: string;
  try {
    text = readFileSync(resolve(context.cwd, path), 'utf8');
  } catch (error) {
    throw new CliUsageError(`${flag}: cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return parseJson(text, `${flag} ${path}`);
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliUsageError(`${what} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Prints steps and a progress line until the run ends (its result) or Ctrl-C (undefined). */
async function watch(
  client: Client,
  handle: WorkflowHandle,
  taskQueue: string,
  context: CliContext,
  stream: boolean,
): Promise<AgentRunResult | undefined> {
  const startedAt = Date.now();
  let progress = '';
  const clearProgress = () => {
    if (context.interactive && progress) process.stdout.write('\r\x1b[K');
    progress = context.interactive ? '' : progress;
  };
  const text = new StreamView(
    {
      write: (chunk) => {
        clearProgress();
        process.stdout.write(chunk);
      },
      line: (line) => {
        clearProgress();
        context.out(line);
      },
    },
    context.interactive,
    outputWidth(context.interactive),
  );
  // Each turn's text comes before the steps it proposed, also when it is printed whole (off a terminal).
  const printTextsBefore = (turns: number): void => {
    for (let turn = 0; turn < turns; turn += 1) text.printTurn(turn);
  };
  const live = new LiveSteps(
    (line) => {
      clearProgress();
      text.close();
      context.out(line);
      progress = '';
    },
    outputWidth(context.interactive),
    printTextsBefore,
  );
  const streaming = stream ? printStream(client, handle.workflowId, text, context) : undefined;
  const show = (state: AgentRunState | undefined): void => {
    live.update(state);
    if (state) printTextsBefore(state.turns);
  };
  // Off a terminal, the steps of a turn wait (a little) for that turn's text, which the stream may bring later.
  const heldSince = new Map<number, number>();
  const mayShow = (state: AgentRunState | undefined): boolean => {
    if (context.interactive || !streaming || !state) return true;
    for (const turn of new Set(state.steps.map((step) => step.turn))) {
      if (text.hasCompleted(turn - 1)) continue;
      const since = heldSince.get(turn) ?? Date.now();
      heldSince.set(turn, since);
      if (Date.now() - since < (text.seenAny ? RUN_WATCH_TIMING.textGraceMs : RUN_WATCH_TIMING.noTextGraceMs)) {
        return false;
      }
    }
    return true;
  };
  let ended: AgentRunResult | undefined;
  let failure: unknown;
  const result = waitForAgentRun(handle).then(
    (r) => (ended = r),
    (error: unknown) => (failure = error ?? new Error('the run failed')),
  );
  let warnedNoWorker = false;
  const toldWaits = new Set<string>();
  while (ended === undefined && failure === undefined && context.lifecycle.signal === undefined) {
    // With the latest progress of running long calls (their heartbeat details).
    const state = await getAgentRunState(client, handle.workflowId).catch(() => undefined);
    if (mayShow(state)) show(state);
    for (const line of state ? await newSubAgentWaits(client, state, toldWaits, context) : []) {
      clearProgress();
      text.close();
      context.out(line);
    }
    const line = progressLine(state, startedAt, Date.now());
    if (text.open) {
      // streamed text is being written on this line: the progress line waits
    } else if (context.interactive) {
      process.stdout.write(`\r\x1b[K${line}`);
      progress = line;
    } else if (line.replace(/ · [\d.]+ s$/, '') !== progress.replace(/ · [\d.]+ s$/, '')) {
      context.err(line);
      progress = line;
    }
    if (!state && !warnedNoWorker && Date.now() - startedAt > RUN_WATCH_TIMING.noWorkerWarningMs) {
      warnedNoWorker = true;
      if (!(await hasWorkers(client, taskQueue))) {
        clearProgress();
        context.err(
          `No worker polls task queue "${taskQueue}": start one with \`${context.self} worker --tools <module>\`.`,
        );
      }
    }
    await Promise.race([result, context.lifecycle.stopRequested, sleep(RUN_WATCH_TIMING.pollIntervalMs)]);
  }
  clearProgress();
  await streaming?.finish(ended !== undefined);
  text.close();
  if (ended) show(ended);
  if (failure !== undefined && context.lifecycle.signal === undefined) throw failure;
  return ended;
}

/** Lines about sub-agent calls that wait for approval, each once (a sub-agent's wait shows nowhere else). */
async function newSubAgentWaits(
  client: Client,
  state: AgentRunState,
  told: Set<string>,
  context: CliContext,
): Promise<string[]> {
  const waits = await subAgentApprovalWaits(state, (id) => getAgentRunState(client, id).catch(() => undefined));
  const fresh = waits.filter((wait) => !told.has(`${wait.workflowId}/${wait.stepId}`));
  for (const wait of fresh) told.add(`${wait.workflowId}/${wait.stepId}`);
  return fresh.map((wait) => subAgentApprovalLine(wait, context.self, context.env));
}

/**
 * Prints the run's live stream (see {@link StreamView}) until `finish`: after the run ended it reads to the
 * stream's end first, otherwise it stops at once. No stream store (or one that fails) means no live text.
 */
function printStream(
  client: Client,
  workflowId: string,
  view: StreamView,
  context: CliContext,
): { finish(ended: boolean): Promise<void> } {
  const stop = new AbortController();
  const reading = (async () => {
    const store = await openCommandStreamStore(context, { existing: true });
    if (!store) return;
    for await (const event of streamAgentRun(client, workflowId, { store, signal: stop.signal })) view.show(event);
  })().catch((error: unknown) => {
    view.close();
    context.err(
      `(no live text: the stream store could not be read: ${error instanceof Error ? error.message : String(error)})`,
    );
  });
  return {
    async finish(ended) {
      if (!ended) stop.abort();
      await reading;
    },
  };
}

async function hasWorkers(client: Client, taskQueue: string): Promise<boolean> {
  try {
    const response = await client.workflowService.describeTaskQueue({
      namespace: client.options.namespace,
      taskQueue: { name: taskQueue },
      taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    });
    return (response.pollers ?? []).length > 0;
  } catch {
    return true;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
