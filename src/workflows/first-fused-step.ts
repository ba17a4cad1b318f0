import { CancellationScope, isCancellation, log, proxyLocalActivities } from '@temporalio/workflow';
import type { FirstFusedStepResult, FusedStepActivities } from '../activities/fused-step';
import { ENGINE_FAILURE_TYPES, isEngineFailure } from '../contract/activity-protocol';
import { FAST_PATH_LIMITS } from '../contract/fast-path';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { transcriptChecksum } from '../contract/transcript-checksum';
import { SUMMARY_MAX_LENGTH } from './agent-run-defaults';
import { modelTurnKey } from './fast-path-model-turn';
import type { FastPath } from './fast-path';
import {
  clearanceBase,
  clearedRunTools,
  fusedOptions,
  fusesTurns,
  type ClearanceSource,
  type FastRunLoop,
} from './fused-step';
import type { RunLoop } from './run-types';
import { turnLimitAbort } from './run-limits';
import { modelRequest } from './run-turn';
import { waitsOutOutage } from './model-outage-wait';
import { modelTurnSummary } from './run-usage';

/*
 * The first step of a fast-path run (docs/fast-path.md, "The first step"): one local activity,
 * `describeToolsAndCallModel`, reads the tool catalog, clears its tools as the workflow would (`clearCatalog`,
 * fused-clearance.ts) and is the first turn's fused step, where a run used to read its catalog in a local activity
 * of its own and only then ask its first turn. The workflow builds its run from the catalog the step returns and
 * takes the turn as a chained one (fused-step.ts): its calls ran, and so may the turns the step chained.
 */

/** What the first step is asked with: the run before its catalog, and its model activity's key. */
export type FirstStepSource = ClearanceSource & Pick<RunLoop, 'modelRunKey'>;

/** What the first step gave: the catalog, and the step's result or the failure of its turn. */
export interface FirstStep {
  catalog: ToolCatalogEntry[];
  /** The step's result, with the checksum of the delta its turn was asked with. */
  taken?: { result: FirstFusedStepResult; checksum: string };
  /** The first turn's failure: the run ends as it would had the turn failed in the loop. */
  failure?: unknown;
}

/**
 * Whether this generation's first step reads the catalog: a run's first generation on the fast path's fused
 * steps (`patched('durable-tools/engine-2026-12-first-step')`), neither forked nor dry, whose limits let it ask a
 * turn. Every other generation reads its catalog first.
 */
export function firstStepReadsCatalog(
  source: Pick<RunLoop, 'input' | 'state' | 'limits'>,
  fastPath: FastPath | undefined,
  engine: { firstStep: boolean },
): fastPath is FastPath {
  const { input } = source;
  return (
    engine.firstStep &&
    fastPath !== undefined &&
    !input.carriedOver &&
    !input.fork &&
    fusesTurns({ fastPath, input, step: { dryRun: input.dryRun } }) &&
    turnLimitAbort(source.state.turns, source.limits, input) === undefined
  );
}

/**
 * Asks the first turn with the catalog (`describeToolsAndCallModel`). When the step fails, the catalog is read on
 * its own (even in a cancelled run: its end needs one) and the failure is returned, for the loop to end the run
 * with; a transcript the worker lost is no failure: the loop asks the turn again with the whole transcript; nor is
 * a provider outage: the loop's ask waits it out (model-outage-wait.ts).
 */
export async function askFirstStep(
  source: FirstStepSource,
  readCatalog: () => Promise<ToolCatalogEntry[]>,
): Promise<FirstStep> {
  const { input, state, transcript } = source;
  // Counted as the loop counts the turn when it takes it (modelTurnRunsLocally): the chain starts from there.
  const base = clearanceBase({
    ...source,
    fastPath: { ...source.fastPath, localCalls: source.fastPath.localCalls + 1 },
  });
  const delta = transcript.delta();
  const summary = modelTurnSummary(state.turns + 1, input.model, state.usage, SUMMARY_MAX_LENGTH);
  const { describeToolsAndCallModel } = proxyLocalActivities<FusedStepActivities>(
    fusedOptions(
      input.model,
      `${summary} · reads the tool catalog, then its cleared tools`,
      base,
      FAST_PATH_LIMITS.maxToolTimeoutMs,
    ),
  );
  try {
    const result = await describeToolsAndCallModel({
      ...modelRequest({ ...source, disclosedOnDemand: false }, delta),
      turnKey: modelTurnKey(state.turns + 1),
      clearance: base,
      rules: {
        ...(input.allowedTools ? { allowedTools: input.allowedTools } : {}),
        approval: input.approval ?? {},
        ...(input.toolDisclosure ? { toolDisclosure: input.toolDisclosure } : {}),
        maxToolTimeoutMs: FAST_PATH_LIMITS.maxToolTimeoutMs,
      },
    });
    return {
      catalog: result.catalog,
      taken: { result, checksum: transcriptChecksum(delta.fromIndex, delta.messages) },
    };
  } catch (error) {
    // Evaluated before the catalog's local activity: a provider that is down is waited out by the loop's ask.
    const askAgain = isEngineFailure(error, ENGINE_FAILURE_TYPES.TRANSCRIPT_MISSING) || waitsOutOutage(error);
    const catalog = isCancellation(error) ? await CancellationScope.nonCancellable(readCatalog) : await readCatalog();
    return askAgain ? { catalog } : { catalog, failure: error };
  }
}

/**
 * The run takes what its first step gave: the turn, its calls and the turns it chained wait as chained turns
 * (taken by `takeChainedTurn`). A step that cleared other tools than the run would (it cannot, as both clear with
 * the same functions) is logged: what ran, ran, under the keys of its steps.
 */
export function takeFirstStep(run: FastRunLoop, step: FirstStep): void {
  const { taken } = step;
  if (!taken) return;
  const { result, checksum } = taken;
  const expected = clearedRunTools(run, FAST_PATH_LIMITS.maxToolTimeoutMs).map((tool) => tool.entry.name);
  if (expected.join('\n') !== result.cleared.join('\n') || run.disclosedOnDemand !== result.disclosedOnDemand) {
    log.warn('The first fused step cleared other tools than the run would.', {
      cleared: result.cleared,
      expected,
      disclosedOnDemand: result.disclosedOnDemand,
    });
  }
  // Too large to return (the catalog with the turns): the loop asks the turn, and its record answers.
  if (!result.step) return;
  const { turn, executed, failed } = result.step;
  const turnNumber = run.state.turns + 1;
  const chained = result.step.chained ?? [];
  run.chained = {
    turns: [{ turnNumber, checksum, turn, executed, ...(failed ? { failed } : {}) }, ...chained],
    through: turnNumber + chained.length,
  };
}
