import {
  ActivityCancellationType,
  log,
  proxyLocalActivities,
  workflowInfo,
  type LocalActivityOptions,
} from '@temporalio/workflow';
import type { CallModelInput } from '../activities/model-activities';
import type { ChainedTurn, FusedStepActivities } from '../activities/fused-step';
import { FAST_PATH_LIMITS } from '../contract/fast-path';
import type { ModelSettings, ModelTurn } from '../contract/model-types';
import type { ToolActivityResult } from '../contract/tool-activity-types';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { SUMMARY_MAX_LENGTH } from './agent-run-defaults';
import { clearedTools } from './fused-clearance';
import { localModelCallOptions, modelTurnKey, modelTurnKeyPrefix } from './fast-path-model-turn';
import type {
  ClearedTool,
  FusedChain,
  FusedClearance,
  FusedClearanceBase,
  FusedFailedCall,
  FusedToolCall,
} from '../contract/fused-step';
import { transcriptChecksum } from '../contract/transcript-checksum';
import { stepKey } from './run-ownership';
import type { FastPath } from './fast-path';
import type { RunLoop, StepContext } from './run-types';

/*
 * The fused step of the fast path (docs/fast-path.md, "The fused step"): a local model turn carries a
 * conservative pre-clearance of the calls it may contain, and its activity (`callModelAndTools`) runs those the
 * workflow would certainly run as local activities right away. The workflow then goes its usual way; a step
 * whose call already ran takes its result (tool-step.ts) instead of scheduling the local activity.
 */

/** A generation on the fast path: the run loop with the fast path's state (built by run-loop.ts). */
export interface FastRunLoop extends RunLoop {
  step: FastStepContext;
  /** The run's fast path (docs/fast-path.md): local model turns and short tool calls. */
  fastPath: FastPath;
  /** Turns the last fused step asked ahead (chained turns), until the run has taken them. */
  chained?: ChainedTurns;
}

/** What a step of a generation on the fast path has besides a regular step's. */
export interface FastStepContext extends StepContext {
  /** The run's fast path: short calls run as local activities (fast-path.ts). */
  fastPath: FastPath;
  /** Calls of the current turn that its fused step already ran, by step id. */
  preExecuted?: Map<number, FusedToolCall>;
  /** The call of the current turn whose attempt failed in its fused step: its local activity goes on from there. */
  preFailed?: FusedFailedCall;
}

/** Turns a fused step asked ahead of the workflow, and the last turn number it asked. */
export interface ChainedTurns {
  turns: ChainedTurn[];
  through: number;
}

/**
 * The pre-clearance of the next turn's calls, or undefined when none of them could run in the fused step (no
 * fused steps, parallel calls, a dry run, no tool cleared): then the turn is a plain `callModelOnce`.
 */
export function fusedClearance(run: FastRunLoop): FusedClearance | undefined {
  if (!fusesTurns(run)) return undefined;
  const tools = clearedRunTools(run);
  return tools.length > 0 ? { ...clearanceBase(run), tools } : undefined;
}

/** Whether the run's turns may be fused steps: on the fast path's fused steps, with calls in sequence, not dry. */
export function fusesTurns(run: Pick<FastRunLoop, 'fastPath' | 'input'> & { step: { dryRun?: unknown } }): boolean {
  return run.fastPath.fused && run.input.parallelToolCalls !== true && !run.step.dryRun;
}

/** The run's model-visible tools that a fused step may run ({@link clearedTools}), within `maxTimeoutMs`. */
export function clearedRunTools(run: FastRunLoop, maxTimeoutMs?: number): ClearedTool[] {
  const { step } = run;
  const visible: ToolCatalogEntry[] = [];
  for (const name of step.visible) {
    const entry = step.catalog.get(name);
    if (entry) visible.push(entry);
  }
  return clearedTools(
    visible,
    { step, disclosedOnDemand: run.disclosedOnDemand, background: run.background },
    maxTimeoutMs,
  );
}

/** What a clearance says besides its tools: read off the run before the turn, so before its catalog too. */
export type ClearanceSource = Pick<
  FastRunLoop,
  'input' | 'state' | 'limits' | 'counters' | 'transcript' | 'fastPath'
> & {
  step: Pick<StepContext, 'scope' | 'irreversibleDone'>;
  background: Pick<RunLoop['background'], 'outstanding'>;
};

/** The clearance of the next turn without its tools: the verdict's inputs, the keys and the chain. */
export function clearanceBase(run: ClearanceSource): FusedClearanceBase {
  const { step, state, input } = run;
  const firstStepId = state.stepCount + 1;
  return {
    verdict: {
      input: {
        ...(input.limits ? { limits: input.limits } : {}),
        ...(input.failurePolicy ? { failurePolicy: input.failurePolicy } : {}),
      },
      limits: run.limits,
      // The verdict reads the totals only: the per-turn list (up to RUN_USAGE_MAX_TURNS_KEPT) stays here.
      usage: { ...state.usage, turns: [] },
      ...(input.costTable ? { costTable: input.costTable } : {}),
      turnNumber: state.turns + 1,
      stepCount: state.stepCount + (state.subAgentSteps ?? 0),
      turnIssues: run.counters.consecutiveTurnIssues,
    },
    firstStepId,
    keys: Array.from({ length: FAST_PATH_LIMITS.maxFusedCallsPerStep }, (_, i) => stepKey(step.scope, firstStepId + i)),
    ...(step.scope.runKey !== undefined ? { runKey: step.scope.runKey } : {}),
    irreversibleDone: step.irreversibleDone,
    ...(run.fastPath.chained && run.background.outstanding === 0 ? { chain: fusedChain(run) } : {}),
  };
}

/**
 * What a fused step needs to chain the next turns (docs/fast-path.md, "Chained turns"): the keys of the next
 * turns and steps, its bounds, and what the workflow checks before a turn. Offered only when no background call
 * is running, whose end could stop the run before its next turn.
 */
function fusedChain(run: ClearanceSource): FusedChain {
  const { input, counters, transcript, fastPath } = run;
  return {
    turnKeyPrefix: modelTurnKeyPrefix(),
    keyPrefix: run.step.scope.keyPrefix,
    maxTurns: FAST_PATH_LIMITS.maxChainedTurns,
    budgetMs: fastPath.chainBudgetMs,
    localCalls: fastPath.localCalls,
    maxLocalCallsPerTask: fastPath.maxLocalCallsPerTask,
    generation: {
      suggested: workflowInfo().continueAsNewSuggested,
      ...(input.continueAsNewAfterSteps !== undefined ? { everySteps: input.continueAsNewAfterSteps } : {}),
      stepsThisGeneration: counters.stepsThisGeneration,
      transcriptBytes: transcript.generationBytes,
    },
  };
}

/**
 * Local activity options of a fused step: the local turn's, with room for the fused calls' attempts in its
 * timeout, and a summary naming the turn and the tools it may run.
 */
export function fusedStepOptions(
  settings: ModelSettings,
  summary: string,
  clearance: FusedClearance,
): LocalActivityOptions {
  const names = clearance.tools.map((tool) => tool.entry.name).join(', ');
  const longest = Math.max(...clearance.tools.map((tool) => tool.entry.timeoutMs));
  return fusedOptions(settings, `${summary} · then ${names}`, clearance, longest);
}

/**
 * Local activity options of a fused step whose calls take at most `longestCallMs` each: the local turn's, with a
 * summary of `text` (cut to {@link SUMMARY_MAX_LENGTH}) and room in its timeout for the chain's budget and an
 * attempt of each call it may run.
 */
export function fusedOptions(
  settings: ModelSettings,
  text: string,
  clearance: FusedClearanceBase,
  longestCallMs: number,
): LocalActivityOptions {
  const summary = text.length > SUMMARY_MAX_LENGTH ? `${text.slice(0, SUMMARY_MAX_LENGTH - 1)}…` : text;
  const options = localModelCallOptions(settings, summary);
  // A chain asks no turn after its budget: at most one more turn and its calls follow.
  const chainMs = clearance.chain ? clearance.chain.budgetMs : 0;
  return {
    ...options,
    startToCloseTimeout: chainMs + (options.startToCloseTimeout as number) + clearance.keys.length * longestCallMs,
    // As a tool call's: a cancelled run waits for the calls that ran (a turn being asked stops at once), so
    // their steps are recorded.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  };
}

/**
 * Asks for turn `turn` and runs its pre-cleared calls in one local activity (`callModelAndTools`), recorded
 * under {@link modelTurnKey} like `callModelOnce`. The calls that ran wait in `step.preExecuted` for their steps.
 */
export async function callModelFused(
  run: FastRunLoop,
  request: CallModelInput,
  summary: string,
  clearance: FusedClearance,
): Promise<ModelTurn> {
  const { callModelAndTools } = proxyLocalActivities<FusedStepActivities>(
    fusedStepOptions(run.input.model, summary, clearance),
  );
  const { turn, executed, chained, failed } = await callModelAndTools({
    ...request,
    turnKey: modelTurnKey(request.turn + 1),
    clearance,
  });
  takeExecuted(run, clearance, executed, failed);
  if (clearance.chain && chained && chained.length > 0) {
    run.chained = { turns: [...chained], through: request.turn + 1 + chained.length };
  }
  return turn;
}

/**
 * The calls a fused step ran for the turn whose first step is `clearance.firstStepId` wait for their steps, and so
 * does the failure of the call whose attempt failed there.
 */
function takeExecuted(
  run: FastRunLoop,
  clearance: Pick<FusedClearance, 'firstStepId'>,
  executed: FusedToolCall[],
  failed?: FusedFailedCall,
): void {
  const last = clearance.firstStepId + FAST_PATH_LIMITS.maxFusedCallsPerStep - 1;
  const mine = (call: { stepId: number }) => call.stepId >= clearance.firstStepId && call.stepId <= last;
  run.step.preExecuted = new Map(executed.filter(mine).map((call) => [call.stepId, call]));
  run.step.preFailed = failed && mine(failed) ? failed : undefined;
}

/**
 * The next turn, when the last fused step already asked it (chained turns) with the very messages the workflow
 * would send now (`transcriptChecksum` of the delta): the turn, its calls waiting for their steps as a fused
 * step's, and the delta marked stored (the step wrote it when it asked). Otherwise undefined, and the chain's
 * turns are dropped: the workflow asks the turn itself, whose record (and its calls' keys) answer at once.
 */
export function takeChainedTurn(run: FastRunLoop): ModelTurn | undefined {
  const pending = run.chained;
  const next = pending?.turns.shift();
  if (!pending || !next) return undefined;
  const delta = run.transcript.delta();
  const expected = run.state.turns + 1;
  if (next.turnNumber !== expected || next.checksum !== transcriptChecksum(delta.fromIndex, delta.messages)) {
    log.warn('A chained turn does not match the run; the turn is asked again.', {
      turn: expected,
      chainedTurn: next.turnNumber,
    });
    pending.turns = [];
    return undefined;
  }
  takeExecuted(run, { firstStepId: run.state.stepCount + 1 }, next.executed, next.failed);
  run.transcript.markStored();
  return next.turn;
}

/**
 * Whether the run still has turns a fused step asked ahead (chained turns) that it has not taken: until it has,
 * it does not continue as new, so the next generation never asks again a turn whose calls already ran.
 */
export function chainedTurnsAhead(run: FastRunLoop): boolean {
  return run.chained !== undefined && run.state.turns < run.chained.through;
}

/**
 * The result of the step's call if the fused step already ran it: the same step id and tool. Taken once. The
 * key is not compared: the activity ran the call under the key the workflow computed for that step id
 * (`clearance.keys`), and a replay under another workflow id (`Worker.runReplayHistory` without one) computes
 * other keys, yet must issue the same commands.
 */
export function takePreExecuted(ctx: FastStepContext, stepId: number, tool: string): ToolActivityResult | undefined {
  const done: FusedToolCall | undefined = ctx.preExecuted?.get(stepId);
  if (!done || done.tool !== tool) return undefined;
  ctx.preExecuted!.delete(stepId);
  return done.result;
}

/**
 * The failure of the step's call if its attempt failed in the fused step (the same step id and tool), taken once:
 * the call's own local activity starts from it (`ToolActivityInput.fusedAttemptFailure`).
 */
export function takePreFailed(ctx: FastStepContext, stepId: number, tool: string): FusedFailedCall | undefined {
  const failed = ctx.preFailed;
  if (!failed || failed.stepId !== stepId || failed.tool !== tool) return undefined;
  ctx.preFailed = undefined;
  return failed;
}
