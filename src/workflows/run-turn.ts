import { proxyActivities } from '@temporalio/workflow';
import type { CallModelInput, ModelActivities } from '../activities/model-activities';
import { ENGINE_FAILURE_TYPES, isEngineFailure } from '../contract/activity-protocol';
import type { ModelSettings, ModelTurn } from '../contract/model-types';
import { SUMMARY_MAX_LENGTH } from './agent-run-defaults';
import { modelCallOptions } from './model-call-options';
import { waitingOutOutages } from './model-outage-wait';
import type { OpenedTurn, RunLoop, TurnSource } from './run-types';
import { traceModelTurn, tracing } from './run-tracing';
import { addTurnUsage, modelTurnSummary } from './run-usage';
import { readTurn, turnMessages, type TurnReading } from './turn-reading';

type TranscriptDelta = Pick<CallModelInput, 'fromIndex' | 'messages'>;

/** The model activity's input for the next turn, with the part of the transcript it is sent. */
export function modelRequest(
  run: Pick<RunLoop, 'input' | 'state' | 'modelRunKey' | 'disclosedOnDemand' | 'extraModelTools'>,
  delta: TranscriptDelta,
): CallModelInput {
  const { input, state } = run;
  return {
    runKey: run.modelRunKey,
    goal: input.goal,
    settings: input.model,
    ...(input.instructions !== undefined ? { instructions: input.instructions } : {}),
    ...(input.output !== undefined ? { output: input.output } : {}),
    ...(input.allowedTools ? { allowedTools: input.allowedTools } : {}),
    turn: state.turns,
    ...delta,
    ...(run.disclosedOnDemand ? { toolView: 'summary' as const } : {}),
    ...(run.extraModelTools ? { extraTools: run.extraModelTools } : {}),
  };
}

/**
 * Asks the model for its next turn, sending only the transcript delta. When the worker's transcript store does
 * not have this run (another machine, a restart), the transcript is sent whole. `opened` is the turn as the
 * generation's turn source opened it: asked ahead already, or how to ask it.
 */
async function askModel(run: RunLoop, opened: OpenedTurn): Promise<ModelTurn> {
  const { input, state, transcript } = run;
  const summary = modelTurnSummary(state.turns + 1, input.model, state.usage, SUMMARY_MAX_LENGTH);
  // A turn asked ahead is taken as it is: nothing is scheduled.
  if ('ready' in opened) return opened.ready;
  const callModel = opened.caller(summary);
  // A provider that is down is waited out (model-outage-wait.ts), each ask as the first.
  return await waitingOutOutages(run, async () => {
    try {
      const turn = await callModel(modelRequest(run, transcript.delta()));
      transcript.markStored();
      return turn;
    } catch (error) {
      if (!isEngineFailure(error, ENGINE_FAILURE_TYPES.TRANSCRIPT_MISSING)) throw error;
      const turn = await callModel(modelRequest(run, transcript.resend(input.goal)));
      transcript.markStored();
      return turn;
    }
  });
}

/** The model activity's call for a turn (what a regular generation's turns are). */
export function callModelActivity(
  settings: ModelSettings,
  summary: string,
): (request: CallModelInput) => Promise<ModelTurn> {
  return proxyActivities<ModelActivities>(modelCallOptions(settings, summary)).callModel;
}

/** The regular turn source of a run with these model settings: each turn is the model activity, none asked ahead. */
export function activityTurns(settings: ModelSettings): TurnSource {
  return {
    open: () => ({ caller: (summary) => callModelActivity(settings, summary) }),
    holdsTurnsAhead: () => false,
  };
}

/** A turn taken: the turn, how the run reads it, and whether it was asked ahead with its calls run. */
export interface TakenTurn {
  turn: ModelTurn;
  reading: TurnReading;
  /** The turn was asked ahead: its calls ran with it, and are settled at once (run-calls.ts). */
  ranAhead: boolean;
}

/**
 * One model turn: asks the model, counts the turn and its usage, and records the assistant's message (and a
 * note of the calls dropped) in the transcript. Returns the turn and how the run reads it.
 *
 * A turn asked ahead (the turn source's `ready`) is taken at once, not as a promise: nothing is scheduled for
 * it, and each promise in the workflow sandbox costs a stack trace in the SDK's promise hook
 * (docs/benchmarks.md). Unless the run is traced: then every turn gets its span, as it comes.
 */
export function takeTurn(run: RunLoop): TakenTurn | Promise<TakenTurn> {
  const opened = run.turns.open();
  if ('ready' in opened && !tracing()) return recordTurn(run, opened.ready, true);
  return askAndRecord(run, opened);
}

async function askAndRecord(run: RunLoop, opened: OpenedTurn): Promise<TakenTurn> {
  const turn = await traceModelTurn(run.state.turns + 1, () => askModel(run, opened));
  return recordTurn(run, turn, false);
}

/** Counts the turn and its usage and puts the assistant's message (and the note) in the transcript. */
function recordTurn(run: RunLoop, turn: ModelTurn, ranAhead: boolean): TakenTurn {
  const { state, input } = run;
  state.turns += 1;
  addTurnUsage(state.usage, state.turns, turn, input.model, input.costTable);
  const reading = readTurn(turn);
  for (const message of turnMessages(reading)) run.transcript.push(message);
  return { turn, reading, ranAhead };
}
