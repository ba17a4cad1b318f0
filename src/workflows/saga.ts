import { CancellationScope, scheduleActivity } from '@temporalio/workflow';
import type { ToolActivityInput } from '../contract/tool-activity-types';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import type { PendingCompensation, StepRecord } from '../contract/agent-run-types';
import { describeActivityFailure } from '../contract/activity-protocol';
import { dryRunActivityType } from '../contract/dry-run-types';
import { COMPENSATION_ACTIVITY_OPTIONS, SUMMARY_MAX_LENGTH } from './agent-run-defaults';
import { compensationKey, type RunScope } from './run-ownership';
import { traceCompensation } from './run-tracing';

/** How compensation went. */
export interface CompensationOutcome {
  compensated: number;
  /** The first step (in compensation order) whose compensation failed permanently. */
  failedStep?: number;
  failedTool?: string;
  error?: string;
}

/**
 * Runs the compensations a run owes, newest first (or all at once with `parallel`), inside a
 * non-cancellable scope so a cancelled run still undoes what it did. Each compensation calls the undo
 * tool with the forward call's input, its output when known and its key, under its own key
 * `${key}/undo` (the key carries the run's owner, so an undo never reaches another run's effect), and is retried until it succeeds or fails permanently. A permanent failure is reported,
 * never swallowed; the remaining compensations still run.
 */
export async function compensate(
  pending: readonly PendingCompensation[],
  catalog: ReadonlyMap<string, ToolCatalogEntry>,
  scope: RunScope,
  stepsById: ReadonlyMap<number, StepRecord>,
  options: { parallel?: boolean; dryRun?: boolean },
): Promise<CompensationOutcome> {
  const ordered = [...pending].reverse();
  const outcome: CompensationOutcome = { compensated: 0 };
  const runOne = async (item: PendingCompensation): Promise<void> => {
    const step = stepsById.get(item.stepId);
    if (step) step.status = 'compensating';
    try {
      await compensateOne(item, catalog.get(item.undo), scope, options.dryRun === true);
      outcome.compensated += 1;
      if (step) step.status = 'compensated';
    } catch (error) {
      const message = describeActivityFailure(error);
      if (step) {
        step.status = 'compensation_failed';
        step.compensationError = message;
      }
      if (outcome.failedStep === undefined) {
        outcome.failedStep = item.stepId;
        outcome.failedTool = item.tool;
        outcome.error = message;
      }
    }
  };
  await CancellationScope.nonCancellable(async () => {
    if (options.parallel) await Promise.all(ordered.map(runOne));
    else for (const item of ordered) await runOne(item);
  });
  return outcome;
}

/**
 * Runs one compensation: the undo tool with the forward call's input, output (when known) and key, under its own
 * key `${key}/undo`, retried until it succeeds or fails permanently (then it throws). Not in a scope of its own:
 * callers run it inside `CancellationScope.nonCancellable`.
 */
export function compensateOne(
  item: PendingCompensation,
  undo: ToolCatalogEntry | undefined,
  scope: RunScope,
  dryRun: boolean,
): Promise<unknown> {
  const input: ToolActivityInput = {
    arguments: {
      originalInput: parseIfJson(item.arguments),
      ...(item.output !== undefined ? { originalOutput: item.output } : {}),
      originalKey: item.idempotencyKey,
    },
    idempotencyKey: compensationKey(item.idempotencyKey),
    stepId: item.stepId,
    // A sub-agent's compensation, taken over by its parent, runs as the child's (its keys and stored data).
    ...((item.runKey ?? scope.runKey) !== undefined ? { runKey: item.runKey ?? scope.runKey } : {}),
    compensationOf: item.tool,
    // A dry run owes no compensation; should one be scheduled anyway, its activity refuses to run it.
    ...(dryRun ? { dryRun: { readOnlyTools: 'record', candidates: [] } } : {}),
  };
  const summary = `undo step ${item.stepId} (${item.tool}) with ${item.undo}`.slice(0, SUMMARY_MAX_LENGTH);
  return traceCompensation(item, () =>
    scheduleActivity(dryRun ? dryRunActivityType(item.undo) : item.undo, [input], {
      ...COMPENSATION_ACTIVITY_OPTIONS,
      ...(undo ? { startToCloseTimeout: undo.timeoutMs } : {}),
      summary,
    }),
  );
}

function parseIfJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}
