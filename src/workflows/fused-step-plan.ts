import type { RunUsage } from '../contract/agent-run-types';
import type { FusedCall, FusedCallPlanner, FusedClearance } from '../contract/fused-step';
import type { ModelSettings, ModelTurn } from '../contract/model-types';
import { prepareCall } from './prepared-call';
import { argumentsTooLarge } from './run-budget';
import { addTurnUsage } from './run-usage';
import { readTurn, toolNameOf, type TurnReading } from './turn-reading';
import { judgeTurn } from './turn-verdict';

/*
 * The fused step's plan (docs/fast-path.md, "The fused step"): the workflow builds a FusedClearance before the
 * turn (fused-step.ts), and the activity `callModelAndTools`, once it has the turn, runs the calls
 * {@link planFusedCalls} returns. Pure, and nothing here imports `@temporalio/workflow`: the worker injects it
 * into the activity (create-worker.ts), so the activity decides with the very functions the workflow uses.
 */

/**
 * The calls of the turn that the fused step runs, in order: none unless the workflow's verdict on the turn
 * will be to run its calls (judgeTurn on the usage after the turn), then the leading calls of pre-cleared
 * tools, up to the first that is not (another tool, arguments over the tool's budget, a compensable call after
 * an unguarded irreversible one) or the number of keys given. Everything after it the workflow runs itself.
 * The caller stops at the first call that does not succeed.
 */
export const planFusedCalls: FusedCallPlanner = (
  turn: ModelTurn,
  settings: ModelSettings,
  clearance: FusedClearance,
): FusedCall[] => {
  const { reading, judged } = judgeClearedTurn(turn, settings, clearance);
  if (judged.verdict.kind !== 'run-calls') return [];
  const planned: FusedCall[] = [];
  let irreversibleDone = clearance.irreversibleDone;
  for (const [index, call] of reading.calls.entries()) {
    const key = clearance.keys[index];
    if (key === undefined) break;
    const name = toolNameOf(call);
    const cleared = clearance.tools.find((tool) => tool.entry.name === name);
    if (!cleared) break;
    const prepared = prepareCall(call?.arguments, cleared.entry);
    if (argumentsTooLarge(prepared.raw, cleared.entry, prepared.bytes)) break;
    if (cleared.entry.effect === 'compensable' && irreversibleDone) break;
    const stepId = clearance.firstStepId + index;
    planned.push({
      tool: name,
      input: {
        arguments: prepared.raw,
        idempotencyKey: key,
        stepId,
        ...(clearance.runKey !== undefined ? { runKey: clearance.runKey } : {}),
      },
    });
    if (cleared.irreversible) irreversibleDone = true;
  }
  return planned;
};

/**
 * The workflow's verdict on a turn asked with `clearance` (`judgeTurn` on the usage after the turn), the turn as
 * the run reads it, and that usage: what the fused step and a chain decide on.
 */
export function judgeClearedTurn(
  turn: ModelTurn,
  settings: ModelSettings,
  clearance: FusedClearance,
): { reading: TurnReading; usage: RunUsage; judged: ReturnType<typeof judgeTurn> } {
  const { verdict } = clearance;
  const reading = readTurn(turn);
  const usage: RunUsage = structuredClone(verdict.usage);
  addTurnUsage(usage, verdict.turnNumber, turn, settings, verdict.costTable);
  const judged = judgeTurn(turn, reading, {
    input: verdict.input,
    limits: verdict.limits,
    usage,
    stepCount: verdict.stepCount,
    turnIssues: verdict.turnIssues,
  });
  return { reading, usage, judged };
}
