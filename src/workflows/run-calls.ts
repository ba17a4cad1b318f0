import { patched } from '@temporalio/workflow';
import type { StepRecord } from '../contract/agent-run-types';
import { FAN_OUT_CAP_PATCH, concurrentCallsCap, settledInPool } from './fan-out';
import type { ModelToolCall } from '../contract/model-types';
import { approvalRejectionVerdict } from './approval-gate';
import { describeToolsStep, isDescribeToolsCall } from './describe-tools-step';
import { failurePolicyVerdict, nextToolErrorStreak } from './failure-policy';
import type { CallExecutor, RunLoop } from './run-types';
import { traceToolStep } from './run-tracing';
import { runToolStep } from './tool-step';
import { toolMessage } from './step-observation';
import { boundTurnObservation } from './turn-observations';

/** One call of the model as a step: `describe_tools`, a background call, or a tool step. */
function runStep(run: RunLoop, call: ModelToolCall): Promise<StepRecord> {
  const { step, background } = run;
  return traceToolStep(String(call?.name), step.pending, () => {
    if (isDescribeToolsCall(call, run.disclosedOnDemand)) return describeToolsStep(call, step);
    return background.handles(call) ? background.run(call) : runToolStep(call, step);
  });
}

/** The observation bytes one turn's settled steps have put in the transcript so far. */
interface TurnObservations {
  usedBytes: number;
}

/**
 * Settles a step of the turn: counts it, puts its observation in the transcript (within what is left of the
 * turn's budget), updates the error streak, and returns the abort reason when a rejection or the failure
 * policy ends the run.
 */
function settleStep(run: RunLoop, turn: TurnObservations, record: StepRecord): string | undefined {
  const { counters, input } = run;
  counters.stepsThisGeneration += 1;
  const bounded = boundTurnObservation(record.observation!, turn.usedBytes);
  turn.usedBytes = bounded.usedBytes;
  run.transcript.push(toolMessage(record, bounded.observation));
  counters.consecutiveToolErrors = nextToolErrorStreak(counters.consecutiveToolErrors, record);
  return (
    approvalRejectionVerdict(record, input.approval) ??
    failurePolicyVerdict(record, input, counters.consecutiveToolErrors)
  );
}

/**
 * Runs all the calls at once. allSettled, not all: when the run is cancelled, every call must have stopped
 * before compensation starts, or an undo could race a forward call that is still finishing. Every step is
 * settled in the model's order; the first abort reason wins.
 */
async function runInParallel(run: RunLoop, calls: readonly ModelToolCall[]): Promise<string | undefined> {
  const turn: TurnObservations = { usedBytes: 0 };
  const cap = concurrentCallsCap(run.input);
  // Past the run's cap the rest of the turn's calls queue (fan-out.ts); histories from before run them all at once.
  const outcomes =
    calls.length > cap && patched(FAN_OUT_CAP_PATCH)
      ? await settledInPool(calls, cap, (call) => runStep(run, call))
      : await Promise.allSettled(calls.map((call) => runStep(run, call)));
  const rejected = outcomes.find((outcome) => outcome.status === 'rejected');
  if (rejected) throw rejected.reason;
  let abortReason: string | undefined;
  for (const outcome of outcomes) {
    if (outcome.status === 'fulfilled') abortReason = abortReason ?? settleStep(run, turn, outcome.value);
  }
  return abortReason;
}

/** Runs the calls one after another; the failure policy may stop the turn after any of them. */
async function runInSequence(
  run: RunLoop,
  calls: readonly ModelToolCall[],
  turn: TurnObservations = { usedBytes: 0 },
): Promise<string | undefined> {
  for (const call of calls) {
    const abortReason = settleStep(run, turn, await runStep(run, call));
    if (abortReason) return abortReason;
  }
  return undefined;
}

/**
 * The calls of a turn asked ahead, which ran with it, settled one after another without a promise by the
 * generation's call executor (`settleRan`); from the first it does not settle on, the calls run in sequence as
 * usual. Nothing is scheduled for a call that ran, so nothing else can come between.
 */
function settleRanCalls(
  run: RunLoop,
  calls: readonly ModelToolCall[],
  settleRan: NonNullable<CallExecutor['settleRan']>,
): string | undefined | Promise<string | undefined> {
  const turn: TurnObservations = { usedBytes: 0 };
  for (const [index, call] of calls.entries()) {
    const record =
      isDescribeToolsCall(call, run.disclosedOnDemand) || run.background.handles(call) ? undefined : settleRan(call);
    if (!record) return runInSequence(run, calls.slice(index), turn);
    const abortReason = settleStep(run, turn, record);
    if (abortReason) return abortReason;
  }
  return undefined;
}

/**
 * Runs a turn's calls, one after another or all at once (`parallelToolCalls`); step ids (so idempotency keys
 * and the compensation order) follow the model's order either way. Returns the abort reason, if any. The calls
 * of a turn asked ahead (`ranAhead`, untraced) are settled at once when they run in sequence: the result is then a
 * value, not a promise (each promise in the workflow sandbox costs a stack trace in the SDK's promise hook).
 */
export function runTurnCalls(
  run: RunLoop,
  calls: readonly ModelToolCall[],
  ranAhead = false,
): string | undefined | Promise<string | undefined> {
  if (run.input.parallelToolCalls) return runInParallel(run, calls);
  const { settleRan } = run.step.calls;
  return ranAhead && settleRan ? settleRanCalls(run, calls, settleRan) : runInSequence(run, calls);
}
