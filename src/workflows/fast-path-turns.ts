import type { CallModelInput } from '../activities/model-activities';
import type { ModelTurn } from '../contract/model-types';
import { modelTurnRunsLocally } from './fast-path';
import { callModelLocally } from './fast-path-model-turn';
import { callModelFused, chainedTurnsAhead, fusedClearance, takeChainedTurn, type FastRunLoop } from './fused-step';
import { callModelActivity } from './run-turn';
import type { OpenedTurn, TurnSource } from './run-types';

/*
 * Where a fast-path generation's turns come from (docs/fast-path.md): a local model turn (counted against the
 * fast path's bound on local calls in a row), a fused step that also runs the calls it pre-cleared, or a turn the
 * last fused step already asked (chained turns); past the bound, the regular model activity. Chosen once per
 * generation by run-loop.ts; run-turn.ts knows only the `TurnSource` it implements.
 */

/** The turn source of a generation on the fast path (`run.fastPath`). */
export function fastPathTurns(run: FastRunLoop): TurnSource {
  return { open: () => openFastTurn(run), holdsTurnsAhead: () => chainedTurnsAhead(run) };
}

/**
 * Opens the next turn: whether it runs locally, and the turn the last fused step already asked, if it asked
 * this one. The last turn's calls that a fused step ran are all taken by now.
 */
function openFastTurn(run: FastRunLoop): OpenedTurn {
  const local = modelTurnRunsLocally(run.fastPath);
  delete run.step.preExecuted;
  const chained = local ? takeChainedTurn(run) : undefined;
  if (chained) return { ready: chained };
  return { caller: (summary) => fastTurnCaller(run, local, summary) };
}

/**
 * How the turn is asked: a local activity recorded under its key (fast-path-model-turn.ts), a fused step running
 * the calls it pre-cleared in the same local activity (fused-step.ts), or the regular model activity.
 */
function fastTurnCaller(
  run: FastRunLoop,
  local: boolean,
  summary: string,
): (request: CallModelInput) => Promise<ModelTurn> {
  const clearance = local ? fusedClearance(run) : undefined;
  if (clearance) return (request) => callModelFused(run, request, summary, clearance);
  if (local) return (request) => callModelLocally(request, run.input.model, summary);
  return callModelActivity(run.input.model, summary);
}
