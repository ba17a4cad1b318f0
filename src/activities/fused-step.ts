import { asyncLocalStorage, CancelledFailure, Context, type Info } from '@temporalio/activity';
import { TOOL_ACTIVITY_NON_RETRYABLE_TYPES } from '../contract/activity-protocol';
import type { ModelTurn } from '../contract/model-types';
import type { ToolActivityInput, ToolActivityResult } from '../contract/tool-activity-types';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import type { FusedCall, FusedCallPlanner, FusedClearance } from '../contract/fused-step';
import type { RecordedModelActivities, RecordedModelTurnInput } from './recorded-model-turn';

/** Input of `callModelAndTools`: a recorded model turn and the pre-clearance of its calls. */
export interface FusedStepInput extends RecordedModelTurnInput {
  clearance: FusedClearance;
}

/** A call the fused step ran, matched by the workflow to its step (step id, tool, idempotency key). */
export interface FusedToolCall {
  stepId: number;
  tool: string;
  idempotencyKey: string;
  /** What the tool's activity returned (its output, attempt, `replayed`, arguments digest). */
  result: ToolActivityResult;
}

/** What `callModelAndTools` returns: the turn and the leading calls it ran, all successful, in order. */
export interface FusedStepResult {
  turn: ModelTurn;
  executed: FusedToolCall[];
}

/** The fused step of the fast path (docs/fast-path.md, "The fused step"). */
export interface FusedStepActivities {
  /**
   * One model turn, asked at most once per turn key (as `callModelOnce`), then the turn's leading calls that
   * the workflow would run as local activities at once (`planFusedCalls`), each through its tool's own
   * activity, until the first that does not succeed.
   */
  callModelAndTools(input: FusedStepInput): Promise<FusedStepResult>;
}

/** Dependencies of {@link createFusedStepActivities}. */
export interface FusedStepActivityDeps {
  /** The recorded model turn (`createRecordedModelActivities(...).callModelOnce`). */
  callModelOnce: RecordedModelActivities['callModelOnce'];
  /** The worker's tool activities by name (`createToolActivities(...)`): a call runs through its tool's. */
  tools: Readonly<Record<string, unknown>>;
  /**
   * Which of the turn's calls run here: the workflow's own `planFusedCalls` (src/workflows/fused-step-plan.ts),
   * which judges the turn and prepares each call with the functions the workflow runs them with.
   */
  plan: FusedCallPlanner;
}

/**
 * Builds `callModelAndTools`. The turn is `callModelOnce`'s (its failure fails the activity, so the workflow
 * retries it as any local turn); each planned call runs through the tool's activity function with the input the
 * workflow would have given it, in a context of its own (the tool's attempt timeout, attempt 1, the tool's
 * retry policy), so the wrapper claims, guards, reconciles and completes its key as in a local activity of its
 * own. A call that fails is not the activity's failure: the calls stop there and the workflow schedules that
 * call itself (its key's state makes the attempt replay or reconcile).
 */
export function createFusedStepActivities(deps: FusedStepActivityDeps): FusedStepActivities {
  return {
    callModelAndTools: async ({ clearance, ...request }) => {
      const turn = await deps.callModelOnce(request);
      const executed: FusedToolCall[] = [];
      // A plan that cannot be made runs nothing here: the workflow then runs every call itself.
      let planned: FusedCall[] = [];
      try {
        planned = deps.plan(turn, request.settings, clearance);
      } catch {
        planned = [];
      }
      for (const call of planned) {
        // Cancelled (the run is being cancelled): no call starts; the workflow records those that ran.
        if (Context.current().cancellationSignal.aborted) break;
        const activity = deps.tools[call.tool];
        const entry = clearance.tools.find((tool) => tool.entry.name === call.tool)?.entry;
        if (typeof activity !== 'function' || !entry) break;
        const result = await runAsToolActivity(entry, call, () =>
          (activity as (input: ToolActivityInput) => Promise<ToolActivityResult>)(call.input),
        ).catch(() => undefined);
        if (!result) break;
        executed.push({
          stepId: call.input.stepId,
          tool: call.tool,
          idempotencyKey: call.input.idempotencyKey,
          result,
        });
      }
      return { turn, executed };
    },
  };
}

/** The parts of an activity's context that are not public (the SDK builds contexts; so does this, per call). */
interface ContextInternals {
  heartbeatFn: (details?: unknown) => void;
  _client: ConstructorParameters<typeof Context>[4];
  _cancellationDetails: ConstructorParameters<typeof Context>[7];
}

/**
 * Runs a tool's activity function as if it were the call's own local activity: a context whose info is the
 * fused activity's with the tool's type, attempt 1, its attempt timeout and retry policy, and a cancellation
 * signal aborted by the fused activity's cancellation or when the tool's attempt timeout passes (as the SDK
 * does for a local activity that timed out).
 */
async function runAsToolActivity(
  entry: ToolCatalogEntry,
  call: FusedCall,
  run: () => Promise<ToolActivityResult>,
): Promise<ToolActivityResult> {
  const parent = Context.current();
  const controller = new AbortController();
  const cancelled = new Promise<never>((_resolve, reject) => {
    controller.signal.addEventListener('abort', () => reject(controller.signal.reason as Error), { once: true });
  });
  cancelled.catch(() => undefined);
  const onParentAbort = () => controller.abort(parent.cancellationSignal.reason);
  if (parent.cancellationSignal.aborted) onParentAbort();
  else parent.cancellationSignal.addEventListener('abort', onParentAbort, { once: true });
  const timer = setTimeout(() => controller.abort(new CancelledFailure('TIMED_OUT')), entry.timeoutMs);
  const now = Date.now();
  const info: Info = {
    ...parent.info,
    activityId: `${parent.info.activityId}/${call.input.stepId}`,
    activityType: call.tool,
    attempt: 1,
    scheduledTimestampMs: now,
    currentAttemptScheduledTimestampMs: now,
    startToCloseTimeoutMs: entry.timeoutMs,
    scheduleToCloseTimeoutMs: entry.retry.totalDeadlineMs,
    heartbeatDetails: undefined,
    // What localToolOptions gives the call's own local activity.
    retryPolicy: {
      maximumAttempts: entry.retry.maximumAttempts,
      initialInterval: entry.retry.initialDelayMs,
      maximumInterval: entry.retry.maxDelayMs,
      backoffCoefficient: 2,
      nonRetryableErrorTypes: [...TOOL_ACTIVITY_NON_RETRYABLE_TYPES],
    },
  };
  const internals = parent as unknown as ContextInternals;
  const context = new Context(
    info,
    cancelled,
    controller.signal,
    internals.heartbeatFn,
    internals._client,
    parent.log,
    parent.metricMeter,
    internals._cancellationDetails,
  );
  try {
    // A tool that ignores its signal past its timeout is left to finish (its lease still guards its key).
    return await Promise.race([asyncLocalStorage.run(context, run), cancelled]);
  } finally {
    clearTimeout(timer);
    parent.cancellationSignal.removeEventListener('abort', onParentAbort);
  }
}
