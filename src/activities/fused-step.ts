import { asyncLocalStorage, CancelledFailure, Context, type Info } from '@temporalio/activity';
import { TOOL_ACTIVITY_NON_RETRYABLE_TYPES } from '../contract/activity-protocol';
import { FAST_PATH_LIMITS } from '../contract/fast-path';
import type {
  CatalogClearanceRules,
  CatalogClearer,
  ChainedTurnPlanner,
  FusedCall,
  FusedCallPlanner,
  FusedClearance,
  FusedClearanceBase,
  FusedToolCall,
  NextChainedTurn,
  TakenTurn,
  FusedFailedCall,
} from '../contract/fused-step';
import type { ModelSettings, ModelTurn } from '../contract/model-types';
import { jsonByteLength } from '../contract/payload-limits';
import type { FusedAttemptFailure, ToolActivityInput, ToolActivityResult } from '../contract/tool-activity-types';
import { ApplicationFailure } from '@temporalio/common';
import { msOptionalToNumber } from '@temporalio/common/lib/time';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { transcriptChecksum } from '../contract/transcript-checksum';
import type { RecordedModelActivities, RecordedModelTurnInput } from './recorded-model-turn';

/** Input of `callModelAndTools`: a recorded model turn and the pre-clearance of its calls. */
export interface FusedStepInput extends RecordedModelTurnInput {
  clearance: FusedClearance;
}

/**
 * A further turn a fused step asked and ran itself (chained turns): the checksum of the delta it sent
 * (`transcriptChecksum`), the turn, and the calls it ran.
 */
export interface ChainedTurn {
  /** The number of the turn (the request's `turn` + 1). */
  turnNumber: number;
  /** `transcriptChecksum(fromIndex, messages)` of the request. */
  checksum: string;
  turn: ModelTurn;
  executed: FusedToolCall[];
  /** The call after them whose attempt failed, if one did. */
  failed?: FusedFailedCall;
}

/** What `callModelAndTools` returns: the turn and the leading calls it ran, all successful, in order. */
export interface FusedStepResult {
  turn: ModelTurn;
  executed: FusedToolCall[];
  /** The call after them whose attempt failed, if one did: the workflow goes on from that failure. */
  failed?: FusedFailedCall;
  /** The turns chained after it, in order (absent when none). */
  chained?: ChainedTurn[];
}

/**
 * Input of `describeToolsAndCallModel`: the first turn of a run, recorded like `callModelOnce` (without its
 * `toolView`, which the catalog decides), its clearance without the tools, and the rules that clear them.
 */
export interface FirstFusedStepInput extends RecordedModelTurnInput {
  clearance: FusedClearanceBase;
  rules: CatalogClearanceRules;
}

/**
 * What `describeToolsAndCallModel` returns: the worker's tool catalog (what `describeTools` returns), how it
 * cleared it, and the fused step's result (with no calls when no tool was cleared), unless the whole would be over
 * {@link FAST_PATH_LIMITS.maxFirstStepResultBytes}.
 */
export interface FirstFusedStepResult {
  catalog: ToolCatalogEntry[];
  /** Whether the model was shown the summary view (the catalog is over the run's disclosure budget). */
  disclosedOnDemand: boolean;
  /** The names of the tools cleared, in order: the workflow checks them against its own clearance. */
  cleared: string[];
  /**
   * The fused step's result. Absent when it would make the result too large: the turn and its calls are recorded
   * under their keys, and the workflow asks the turn itself.
   */
  step?: FusedStepResult;
}

/** The fused step of the fast path (docs/fast-path.md, "The fused step"). */
export interface FusedStepActivities {
  /**
   * One model turn, asked at most once per turn key (as `callModelOnce`), then the turn's leading calls that
   * the workflow would run as local activities at once (`planFusedCalls`), each through its tool's own
   * activity, until the first that does not succeed; then, when the clearance allows a chain, the next turns
   * the workflow would certainly ask locally (`planChainedTurn`), each the same way.
   */
  callModelAndTools(input: FusedStepInput): Promise<FusedStepResult>;
  /**
   * The first fused step of a run (docs/fast-path.md, "The first step"): reads the tool catalog, clears its tools
   * as the workflow would (`clearCatalog`), then is `callModelAndTools` with that clearance, or `callModelOnce`
   * when no tool is cleared. One local activity where there were two: the workflow builds its run from the
   * catalog returned.
   */
  describeToolsAndCallModel(input: FirstFusedStepInput): Promise<FirstFusedStepResult>;
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
  /**
   * Whether and with what the next turn is chained: the workflow's own `planChainedTurn`
   * (src/workflows/fused-chain-plan.ts). Without it no turn is chained.
   */
  chain?: ChainedTurnPlanner;
  /** The clock of the chain's time budget (default `Date.now`). */
  now?: () => number;
  /** The worker's tool catalog (`createToolActivities(...).describeTools`): the first step reads it. */
  describeTools: () => Promise<ToolCatalogEntry[]>;
  /** How the first step clears the catalog's tools: the workflow's own `clearCatalog` (fused-clearance.ts). */
  clear: CatalogClearer;
}

/**
 * Builds `callModelAndTools`. The turn is `callModelOnce`'s (its failure fails the activity, so the workflow
 * retries it as any local turn); each planned call runs through the tool's activity function with the input the
 * workflow would have given it, in a context of its own (the tool's attempt timeout, attempt 1, the tool's
 * retry policy), so the wrapper claims, guards, reconciles and completes its key as in a local activity of its
 * own. A call that fails is not the activity's failure: the calls stop there and the workflow schedules that
 * call itself (its key's state makes the attempt replay or reconcile).
 *
 * Chained turns: while the planner says the workflow would ask the next turn locally at once, the step asks it
 * (recorded under its own turn key, with the messages the workflow would send) and runs its calls the same way,
 * within the clearance's number of turns and time budget and {@link FAST_PATH_LIMITS.maxChainResultBytes}. A
 * chained turn that fails ends the chain, not the activity: the workflow asks that turn itself.
 */
export function createFusedStepActivities(deps: FusedStepActivityDeps): FusedStepActivities {
  const now = deps.now ?? Date.now;
  return {
    callModelAndTools: ({ clearance, ...request }) => fusedStep(deps, now, request, clearance),
    describeToolsAndCallModel: async ({ clearance, rules, ...request }) => {
      const catalog = await deps.describeTools();
      const { tools, disclosedOnDemand } = deps.clear(catalog, rules);
      const asked: RecordedModelTurnInput = disclosedOnDemand ? { ...request, toolView: 'summary' } : request;
      const cleared = tools.map((tool) => tool.entry.name);
      // No tool cleared: the workflow would have asked a plain local turn (fusedClearance is undefined).
      const step: FusedStepResult =
        tools.length > 0
          ? await fusedStep(deps, now, asked, { ...clearance, tools })
          : { turn: await deps.callModelOnce(asked), executed: [] };
      const opened = { catalog, disclosedOnDemand, cleared };
      const bytes = jsonByteLength(catalog) + jsonByteLength(step);
      return bytes > FAST_PATH_LIMITS.maxFirstStepResultBytes ? opened : { ...opened, step };
    },
  };
}

/** One fused step: the recorded turn, its planned calls, then the chained turns. */
async function fusedStep(
  deps: FusedStepActivityDeps,
  now: () => number,
  request: RecordedModelTurnInput,
  clearance: FusedClearance,
): Promise<FusedStepResult> {
  const started = now();
  const turn = await deps.callModelOnce(request);
  const { executed, failed } = await runPlannedCalls(deps, turn, request.settings, clearance);
  const first: TakenTurn = {
    turn,
    clearance,
    position: { turn: request.turn, fromIndex: request.fromIndex, messageCount: request.messages.length },
    executed,
  };
  const chained = await chainTurns(deps, request, first, () => now() - started);
  return { turn, executed, ...(failed ? { failed } : {}), ...(chained.length > 0 ? { chained } : {}) };
}

/**
 * Runs the turn's calls that the plan says the workflow would run as local activities at once, each through its
 * tool's activity function, until the first that does not succeed; returns those that ran, and the failure of
 * the one that failed (not when the step is cancelled).
 */
async function runPlannedCalls(
  deps: FusedStepActivityDeps,
  turn: ModelTurn,
  settings: ModelSettings,
  clearance: FusedClearance,
): Promise<{ executed: FusedToolCall[]; failed?: FusedFailedCall }> {
  const executed: FusedToolCall[] = [];
  // A plan that cannot be made runs nothing here: the workflow then runs every call itself.
  let planned: FusedCall[] = [];
  try {
    planned = deps.plan(turn, settings, clearance);
  } catch {
    planned = [];
  }
  for (const call of planned) {
    // Cancelled (the run is being cancelled): no call starts; the workflow records those that ran.
    if (Context.current().cancellationSignal.aborted) break;
    const activity = deps.tools[call.tool];
    const entry = clearance.tools.find((tool) => tool.entry.name === call.tool)?.entry;
    if (typeof activity !== 'function' || !entry) break;
    let thrown: unknown;
    const result = await runAsToolActivity(entry, call, () =>
      (activity as (input: ToolActivityInput) => Promise<ToolActivityResult>)(call.input),
    ).catch((error: unknown) => void (thrown = error));
    if (!result) {
      if (thrown === undefined || Context.current().cancellationSignal.aborted) break;
      return { executed, failed: { stepId: call.input.stepId, tool: call.tool, failure: attemptFailureOf(thrown) } };
    }
    executed.push({ stepId: call.input.stepId, tool: call.tool, idempotencyKey: call.input.idempotencyKey, result });
  }
  return { executed };
}

/** What a call's attempt threw, as its own local activity's first attempt throws it again. */
function attemptFailureOf(error: unknown): FusedAttemptFailure {
  if (error instanceof ApplicationFailure) {
    const delay = msOptionalToNumber(error.nextRetryDelay ?? undefined);
    return {
      message: error.message,
      ...(error.type ? { type: error.type } : {}),
      nonRetryable: error.nonRetryable === true,
      ...(error.details && error.details.length > 0 ? { details: [...error.details] } : {}),
      ...(delay !== undefined ? { nextRetryDelayMs: delay } : {}),
    };
  }
  const failure = error instanceof Error ? error : new Error(String(error));
  return { message: failure.message, type: failure.name, nonRetryable: false };
}

/**
 * The turns chained after the first (docs/fast-path.md, "Chained turns"): while the planner says the workflow
 * would ask the next turn locally at once, and within the chain's turns, time budget and result bytes, asks it
 * and runs its calls. A turn that cannot be asked (a failure) ends the chain; so does a cancellation.
 */
async function chainTurns(
  deps: FusedStepActivityDeps,
  request: RecordedModelTurnInput,
  first: TakenTurn,
  elapsedMs: () => number,
): Promise<ChainedTurn[]> {
  const chain = first.clearance.chain;
  const chained: ChainedTurn[] = [];
  if (!chain || !deps.chain) return chained;
  let bytes = jsonByteLength({ turn: first.turn, executed: first.executed });
  let taken = first;
  while (chained.length < chain.maxTurns && elapsedMs() < chain.budgetMs) {
    if (Context.current().cancellationSignal.aborted) break;
    const next = planNext(deps.chain, taken, request.settings);
    if (!next) break;
    const link = await takeChainedTurn(deps, request, chain.turnKeyPrefix, next);
    if (!link) break;
    bytes += jsonByteLength(link);
    // Left out, the turn is asked again by the workflow: its record and its calls' keys answer at once.
    if (bytes > FAST_PATH_LIMITS.maxChainResultBytes) break;
    chained.push(link);
    taken = {
      turn: link.turn,
      clearance: next.clearance,
      position: { turn: next.turn, fromIndex: next.fromIndex, messageCount: next.messages.length },
      executed: link.executed,
    };
  }
  return chained;
}

/** The planner's next turn; none when it cannot say (it throws). */
function planNext(planner: ChainedTurnPlanner, taken: TakenTurn, settings: ModelSettings): NextChainedTurn | undefined {
  try {
    return planner(taken, settings);
  } catch {
    return undefined;
  }
}

/**
 * Asks a chained turn with the messages the workflow would send (recorded under its own turn key) and runs its
 * planned calls; undefined when the turn cannot be asked.
 */
async function takeChainedTurn(
  deps: FusedStepActivityDeps,
  request: RecordedModelTurnInput,
  turnKeyPrefix: string,
  next: NextChainedTurn,
): Promise<ChainedTurn | undefined> {
  const asked = await deps
    .callModelOnce({
      ...request,
      turn: next.turn,
      fromIndex: next.fromIndex,
      messages: next.messages,
      turnKey: `${turnKeyPrefix}${next.turn + 1}`,
    })
    .catch(() => undefined);
  if (!asked) return undefined;
  const { executed, failed } = await runPlannedCalls(deps, asked, request.settings, next.clearance);
  return {
    turnNumber: next.turn + 1,
    checksum: transcriptChecksum(next.fromIndex, next.messages),
    turn: asked,
    executed,
    ...(failed ? { failed } : {}),
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
