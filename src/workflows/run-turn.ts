import { proxyActivities } from '@temporalio/workflow';
import type { CallModelInput, ModelActivities } from '../activities/model-activities';
import { ENGINE_FAILURE_TYPES, isEngineFailure } from '../contract/activity-protocol';
import type { ModelTurn } from '../contract/model-types';
import { SUMMARY_MAX_LENGTH } from './agent-run-defaults';
import { modelCallOptions } from './model-call-options';
import { callModelLocally } from './fast-path-model-turn';
import { modelTurnRunsLocally } from './fast-path';
import { callModelFused, fusedClearance, takeChainedTurn } from './fused-step';
import type { RunLoop } from './run-types';
import { traceModelTurn, tracing } from './run-tracing';
import { addTurnUsage, modelTurnSummary } from './run-usage';
import { readTurn, turnMessages, type TurnReading } from './turn-reading';

type TranscriptDelta = Pick<CallModelInput, 'fromIndex' | 'messages'>;

/** The model activity's input for the next turn, with the part of the transcript it is sent. */
export function modelRequest(
  run: Pick<RunLoop, 'input' | 'state' | 'modelRunKey' | 'disclosedOnDemand'>,
  delta: TranscriptDelta,
): CallModelInput {
  const { input, state } = run;
  return {
    runKey: run.modelRunKey,
    goal: input.goal,
    settings: input.model,
    ...(input.allowedTools ? { allowedTools: input.allowedTools } : {}),
    turn: state.turns,
    ...delta,
    ...(run.disclosedOnDemand ? { toolView: 'summary' as const } : {}),
  };
}

/**
 * Asks the model for its next turn, sending only the transcript delta. When the worker's transcript store does
 * not have this run (another machine, a restart), the transcript is sent whole. `opened` says whether the turn
 * runs locally and holds the turn a fused step already asked, if any ({@link openTurn}).
 */
async function askModel(run: RunLoop, opened: OpenedTurn): Promise<ModelTurn> {
  const { input, state, transcript } = run;
  const summary = modelTurnSummary(state.turns + 1, input.model, state.usage, SUMMARY_MAX_LENGTH);
  // A turn the last fused step already asked and ran (chained turns) is taken as it is: nothing is scheduled.
  if (opened.chained) return opened.chained;
  const { local } = opened;
  // On the fast path the turn is a local activity recorded under its key (fast-path-model-turn.ts); a fused
  // step runs the calls it pre-cleared in the same local activity (fused-step.ts).
  const clearance = local ? fusedClearance(run) : undefined;
  const callModel = clearance
    ? (request: CallModelInput) => callModelFused(run, request, summary, clearance)
    : local
      ? (request: CallModelInput) => callModelLocally(request, input.model, summary)
      : proxyActivities<ModelActivities>(modelCallOptions(input.model, summary)).callModel;
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
}

/** Where the next turn comes from: a local or a regular activity, or the last fused step (chained turns). */
interface OpenedTurn {
  local: boolean;
  chained?: ModelTurn;
}

/**
 * Opens the next turn: whether it runs locally (counted against the fast path's bound on local calls in a
 * row), and the turn the last fused step already asked, if it asked this one. The last turn's calls that a
 * fused step ran are all taken by now.
 */
function openTurn(run: RunLoop): OpenedTurn {
  const local = modelTurnRunsLocally(run.fastPath);
  delete run.step.preExecuted;
  const chained = local ? takeChainedTurn(run) : undefined;
  return chained ? { local, chained } : { local };
}

/** A turn taken: the turn, how the run reads it, and whether a fused step already ran its calls (chained). */
export interface TakenTurn {
  turn: ModelTurn;
  reading: TurnReading;
  /** The turn was chained: its calls ran in the fused step that asked it, and are settled at once (run-calls.ts). */
  ranAhead: boolean;
}

/**
 * One model turn: asks the model, counts the turn and its usage, and records the assistant's message (and a
 * note of the calls dropped) in the transcript. Returns the turn and how the run reads it.
 *
 * A turn the last fused step already asked (chained turns) is taken at once, not as a promise: nothing is
 * scheduled for it, and each promise in the workflow sandbox costs a stack trace in the SDK's promise hook
 * (docs/benchmarks.md). Unless the run is traced: then every turn gets its span, as it comes.
 */
export function takeTurn(run: RunLoop): TakenTurn | Promise<TakenTurn> {
  const opened = openTurn(run);
  if (opened.chained && !tracing()) return recordTurn(run, opened.chained, true);
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
