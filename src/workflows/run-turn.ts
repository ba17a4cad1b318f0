import { proxyActivities } from '@temporalio/workflow';
import type { CallModelInput, ModelActivities } from '../activities/model-activities';
import { ENGINE_FAILURE_TYPES, isEngineFailure } from '../contract/activity-protocol';
import type { ModelTurn } from '../contract/model-types';
import { SUMMARY_MAX_LENGTH } from './agent-run-defaults';
import { modelCallOptions } from './model-call-options';
import { callModelLocally } from './fast-path-model-turn';
import { modelTurnRunsLocally } from './fast-path';
import { callModelFused, fusedClearance, takeChainedTurn } from './fused-step';
import type { RunLoop } from './run-loop';
import { traceModelTurn } from './run-tracing';
import { addTurnUsage, modelTurnSummary } from './run-usage';
import { readTurn, turnMessages, type TurnReading } from './turn-reading';

type TranscriptDelta = Pick<CallModelInput, 'fromIndex' | 'messages'>;

/** The model activity's input for the next turn, with the part of the transcript it is sent. */
function modelRequest(run: RunLoop, delta: TranscriptDelta): CallModelInput {
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
 * not have this run (another machine, a restart), the transcript is sent whole.
 */
async function askModel(run: RunLoop): Promise<ModelTurn> {
  const { input, state, transcript } = run;
  const summary = modelTurnSummary(state.turns + 1, input.model, state.usage, SUMMARY_MAX_LENGTH);
  // On the fast path the turn is a local activity recorded under its key (fast-path-model-turn.ts); a fused
  // step runs the calls it pre-cleared in the same local activity (fused-step.ts).
  const local = modelTurnRunsLocally(run.fastPath);
  delete run.step.preExecuted;
  // A turn the last fused step already asked and ran (chained turns) is taken as it is: nothing is scheduled.
  const chained = local ? takeChainedTurn(run) : undefined;
  if (chained) return chained;
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

/**
 * One model turn: asks the model, counts the turn and its usage, and records the assistant's message (and a
 * note of the calls dropped) in the transcript. Returns the turn and how the run reads it.
 */
export async function takeTurn(run: RunLoop): Promise<{ turn: ModelTurn; reading: TurnReading }> {
  const { state, input } = run;
  const turn = await traceModelTurn(state.turns + 1, () => askModel(run));
  state.turns += 1;
  addTurnUsage(state.usage, state.turns, turn, input.model, input.costTable);
  const reading = readTurn(turn);
  for (const message of turnMessages(reading)) run.transcript.push(message);
  return { turn, reading };
}
