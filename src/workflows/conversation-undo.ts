import type { PendingCompensation } from '../contract/agent-run-types';
import { UNDO_STEP_ENTRY, UNDO_STEP_TOOL } from '../contract/conversation-types';
import type { ToolActivityResult } from '../contract/tool-activity-types';
import type { CallExecutor, RunLoop, StepContext } from './run-types';
import { compensateOne } from './saga';

/*
 * The conversation's built-in `undo_step` tool (docs/conversations.md, "Undo on request"). Undo tools are never the
 * model's (an undo with a made-up key is not the model's to run); in a conversation the model may still ask for
 * an earlier call to be undone (cancel the booking of message 2 in message 3): `undo_step` names the tool or the
 * step, and the workflow runs the compensation it owes for that call, as a failure would, under the call's
 * compensation key `${key}/undo`, then owes it no more.
 */

/** Gives a conversation turn's generation the `undo_step` tool: in its catalog, its visible tools and its executor. */
export function offerUndoStep(run: RunLoop): void {
  const { step } = run;
  step.catalog = new Map([...step.catalog, [UNDO_STEP_TOOL, UNDO_STEP_ENTRY]]);
  step.visible = new Set([...step.visible, UNDO_STEP_TOOL]);
  // Counted with the undo tools: running it is no irreversible forward step (effect-tiers.ts).
  step.undoTools = new Set([...step.undoTools, UNDO_STEP_TOOL]);
  step.calls = undoStepCalls(step, step.calls);
  run.extraModelTools = [UNDO_STEP_ENTRY];
}

/** The executor that runs `undo_step` in the workflow and every other call as `runs` does. */
function undoStepCalls(ctx: StepContext, runs: CallExecutor): CallExecutor {
  return {
    start: (call) =>
      call.entry.name === UNDO_STEP_TOOL ? { running: undoOwedCall(ctx, call.input.arguments) } : runs.start(call),
  };
}

/** Runs the compensation owed for the call the arguments name; it is owed no more once it succeeded. */
async function undoOwedCall(ctx: StepContext, args: unknown): Promise<ToolActivityResult> {
  const owed = owedCallOf(ctx.pending, args);
  if (!owed) {
    const names = [...new Set(ctx.pending.map((item) => item.tool))];
    return {
      attempt: 1,
      output: {
        undone: false,
        reason:
          names.length > 0
            ? `No call of that tool or step is owed an undo; calls of ${names.join(', ')} are.`
            : 'No earlier call of this conversation can be undone.',
      },
    };
  }
  const result = (await compensateOne(owed, ctx.catalog.get(owed.undo), ctx.scope, false)) as ToolActivityResult;
  const index = ctx.pending.indexOf(owed);
  if (index >= 0) ctx.pending.splice(index, 1);
  return {
    attempt: 1,
    output: { undone: true, step: owed.stepId, tool: owed.tool, undo: owed.undo, output: result?.output },
  };
}

/** The owed call the arguments name: by step, or the newest call of the tool (the newest owed call without either). */
function owedCallOf(pending: readonly PendingCompensation[], args: unknown): PendingCompensation | undefined {
  const parsed = typeof args === 'string' ? safeParse(args) : args;
  const { tool, step } = (parsed && typeof parsed === 'object' ? parsed : {}) as { tool?: unknown; step?: unknown };
  const newestFirst = [...pending].reverse();
  if (typeof step === 'number') return newestFirst.find((item) => item.stepId === step);
  if (typeof tool === 'string') return newestFirst.find((item) => item.tool === tool || item.undo === tool);
  return newestFirst[0];
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
