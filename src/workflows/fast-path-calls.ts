import { scheduleActivity, scheduleLocalActivity } from '@temporalio/workflow';
import type { ModelToolCall } from '../contract/model-types';
import type { StepRecord } from '../contract/agent-run-types';
import type { ToolActivityResult } from '../contract/tool-activity-types';
import { opensAtOnce } from './approval-override';
import { fastPathToolOptions, toolRunsLocally } from './fast-path';
import { takePreExecuted, takePreFailed, type FastStepContext } from './fused-step';
import { qualifiesLocally } from './local-qualification';
import type { CallExecutor, ExecutedCall, StartedCall } from './run-types';
import { localToolOptions, toolActivityOptions } from './tool-call-options';
import { settleAtOnce } from './tool-step';
import { toolNameOf } from './turn-reading';

/*
 * How a fast-path generation's tool calls run (docs/fast-path.md): a short call as a local activity (counted
 * against the fast path's bound on local calls in a row), a call the turn's fused step already ran taken as it
 * is, any other as the regular activity. Chosen once per generation by run-loop.ts; tool-step.ts knows only the
 * `CallExecutor` it implements.
 */

/** The call executor of a generation on the fast path (`ctx.fastPath`, counted as calls run). */
export function fastPathCalls(ctx: FastStepContext): CallExecutor {
  return {
    start: (call) => startOnFastPath(ctx, call),
    settleRan: (call) => settleRanStep(ctx, call),
  };
}

function startOnFastPath(ctx: FastStepContext, call: ExecutedCall): StartedCall {
  const { entry, activityType, input, redacted, summarized } = call;
  const fast = ctx.fastPath;
  if (!toolRunsLocally(fast, entry, call.approved)) {
    const options = toolActivityOptions(entry, redacted, summarized);
    return { running: scheduleActivity<ToolActivityResult>(activityType, [input], options) };
  }
  // A call the turn's fused step already ran, with this very input (fused-step.ts), is not scheduled.
  const ran = takePreExecuted(ctx, call.stepId, entry.name);
  if (ran) return { ran };
  // Its attempt failed inside the fused step: its first attempt here ends with that failure (retries go on).
  const failed = takePreFailed(ctx, call.stepId, entry.name);
  const options =
    entry.execution === 'local'
      ? localToolOptions(entry, redacted, summarized)
      : fastPathToolOptions(entry, redacted, summarized);
  const args = [failed ? { ...input, fusedAttemptFailure: failed.failure } : input];
  return { running: scheduleLocalActivity<ToolActivityResult>(activityType, args, options) };
}

/**
 * A call of a chained turn that the fused step which asked the turn already ran, settled at once as
 * `runToolStep` settles it (`settleAtOnce`, tool-step.ts) — the same step, checks, compensation, local-call count
 * and observation — without a promise. Undefined, with nothing changed, when `runToolStep` would do anything else
 * with the call (ask for approval, schedule it, start a child, answer it dry): it then runs the call.
 */
function settleRanStep(ctx: FastStepContext, call: ModelToolCall): StepRecord | undefined {
  const fast = ctx.fastPath;
  const name = toolNameOf(call);
  const entry = ctx.visible.has(name) ? ctx.catalog.get(name) : undefined;
  const ran = ctx.preExecuted?.get(ctx.state.stepCount + 1);
  if (
    ctx.dryRun ||
    !entry ||
    entry.agent ||
    ran?.tool !== name ||
    !opensAtOnce(entry, ctx.approvals.policy) ||
    !qualifiesLocally(fast, entry, false)
  ) {
    return undefined;
  }
  return settleAtOnce(call, ctx, (step) => {
    // Counted as a started call counts it: the call ran as a local activity of this workflow task.
    toolRunsLocally(fast, entry, false);
    return takePreExecuted(ctx, step.stepId, name)!;
  });
}
