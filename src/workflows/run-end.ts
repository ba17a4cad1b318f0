import { upsertSearchAttributes } from '@temporalio/workflow';
import type {
  AgentRunInput,
  AgentRunResult,
  AgentRunState,
  PendingCompensation,
  RunStatus,
} from '../contract/agent-run-types';
import { PAYLOAD_LIMITS, truncateText } from '../contract/payload-limits';
import { SEARCH_ATTRIBUTES } from '../contract/search-attributes';
import { backgroundFailureVerdict } from './failure-policy';
import { boundedRunView } from './run-budget';
import type { RunLoop } from './run-types';
import { failedRun, type RunAbort } from './run-loop-state';
import { markRunStatus } from './run-tracing';
import { compensate } from './saga';

/** Sets the run's status: in its state, on its span, and in its search attribute when the run tracks it. */
export function setRunStatus(state: AgentRunState, status: RunStatus, input: AgentRunInput): void {
  state.status = status;
  markRunStatus(status);
  if (input.trackStatusSearchAttribute) {
    upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.runStatus, value: status }]);
  }
}

/** Ends the run with a status; its result references large outputs (claim checks) and stays within budget. */
export function finishRun(run: RunLoop, status: RunStatus): AgentRunResult {
  setRunStatus(run.state, status, run.input);
  const view = boundedRunView(run.state);
  // A completed sub-agent hands what it owes to its parent, which undoes it if the parent aborts later.
  if (status === 'completed' && run.input.subAgent && run.step.pending.length > 0) {
    view.subAgentCompensations = handedOverCompensations(run);
  }
  return view;
}

/** The compensations a completed sub-agent owes, each marked with its owner (the child's own run key). */
function handedOverCompensations(run: RunLoop): PendingCompensation[] {
  const { scope, pending } = run.step;
  return pending.map((item) => ({
    ...item,
    ...(item.runKey === undefined && scope.runKey !== undefined ? { runKey: scope.runKey } : {}),
  }));
}

/**
 * Ends the run early: background calls are cancelled first (nothing runs on after the run ends, and no undo
 * races a forward call still finishing), then the compensations owed run newest first when the abort says so.
 */
export async function abortRun(run: RunLoop, abort: RunAbort): Promise<AgentRunResult> {
  const { state, step, background } = run;
  state.reason = truncateText(abort.reason, PAYLOAD_LIMITS.errorTextChars * 2);
  if (abort.code !== undefined) state.failureCode = abort.code;
  if (background.outstanding > 0) await background.cancelAll();
  if (!abort.compensate || step.pending.length === 0) return finishRun(run, abort.status);
  const stepsById = new Map(state.steps.map((s) => [s.stepId, s]));
  const outcome = await compensate(step.pending, step.catalog, step.scope, stepsById, {
    ...run.input.compensation,
    ...(run.input.dryRun ? { dryRun: true } : {}),
  });
  step.pending.length = 0;
  if (outcome.failedStep !== undefined) {
    state.failedCompensationStep = outcome.failedStep;
    state.reason = `${abort.reason} Compensation of step ${outcome.failedStep} (${outcome.failedTool}) failed: ${outcome.error}`;
    return finishRun(run, 'compensation_failed');
  }
  return finishRun(run, abort.status === 'cancelled' ? 'cancelled' : 'compensated');
}

/**
 * A background step that failed is judged by the failure policy as soon as the run sees it has ended: the
 * abort if one did, undefined otherwise.
 */
export function backgroundAbort(run: RunLoop): RunAbort | undefined {
  const reason = backgroundFailureVerdict(run.background.takeFailures(), run.input);
  return reason ? failedRun(reason) : undefined;
}

/**
 * Ends the run with the model's answer. Background calls still running are waited for (or cancelled and
 * compensated, `backgroundCalls.onFinish: 'cancel'`); one that failed counts like any step, so a critical
 * one aborts the run.
 */
export async function completeRun(run: RunLoop, answer: string): Promise<AgentRunResult> {
  const { state, background, input } = run;
  state.answer = answer;
  const undone =
    background.outstanding > 0
      ? await background.finish(input.backgroundCalls?.onFinish ?? 'wait', input.compensation ?? {})
      : undefined;
  if (undone?.failedStep !== undefined) {
    state.failedCompensationStep = undone.failedStep;
    state.reason = `Compensation of background step ${undone.failedStep} (${undone.failedTool}) failed: ${undone.error}`;
    return finishRun(run, 'compensation_failed');
  }
  const failedWhileWaiting = backgroundAbort(run);
  if (failedWhileWaiting) return abortRun(run, failedWhileWaiting);
  return finishRun(run, 'completed');
}
