/**
 * The fast path of an agent run (docs/fast-path.md): short tool calls and the model turns run as Temporal
 * local activities inside the workflow task, so a run of short steps needs no server round trip per step.
 * Shared by the workflow (what qualifies, the options) and the client (the run input's `fastPath`).
 */

import { DEFAULT_TOOL_TIMEOUT_MS } from './tool-defaults';

/** The fast path's settings of one run; `fastPath: true` takes them all by default. */
export interface FastPathOptions {
  /**
   * Local calls (model turns and tool calls) in a row before the next model turn runs as a regular
   * activity, which ends the workflow task and records the local results (markers) in history. It bounds
   * the work a retried workflow task replays from the stores after a crash. Default
   * {@link FAST_PATH_LIMITS.maxLocalCallsPerTask}.
   */
  maxLocalCallsPerTask?: number;
  /** Run the model turns as local activities too (default true); false keeps them regular activities. */
  modelTurns?: boolean;
  /**
   * Fused steps (default true): a local model turn runs the turn's short tool calls that the run would
   * certainly run as local activities right away in the same local activity (`callModelAndTools`), one local
   * activity per step instead of two. False: every local call is its own local activity.
   */
  fusedSteps?: boolean;
  /**
   * Chained turns (default true, with fused steps): a fused step whose turn ran all its calls goes on with the
   * next turn itself, and the next, while the run would certainly ask them locally, up to
   * {@link FAST_PATH_LIMITS.maxChainedTurns} turns and {@link FAST_PATH_LIMITS.chainBudgetMs}: a run of short
   * steps needs one local activity for many steps. False: one fused step per turn.
   */
  chainedTurns?: boolean;
  /**
   * How long a fused step goes on asking further turns (chained turns), in ms: default
   * {@link FAST_PATH_LIMITS.chainBudgetMs}, at most {@link FAST_PATH_LIMITS.maxChainBudgetMs}. Once it has run
   * this long it asks no further turn, so a signal, an update or a cancellation waits at most this long plus one
   * turn and its calls. 0 chains no turn.
   */
  chainBudgetMs?: number;
}

/**
 * The run input's switch: `true` for the defaults, or the settings; `false`: no fast path (every step a regular
 * activity). Absent: the fast path with its defaults for a run started since the fast path became the default
 * (`patched('durable-tools/engine-2026-12-fast-default')`), regular activities for a run started before.
 */
export type FastPathSetting = boolean | FastPathOptions;

/** Bounds of the fast path. */
export const FAST_PATH_LIMITS = {
  /**
   * The longest attempt timeout of a tool that runs locally: the default tool timeout
   * (`DEFAULT_TOOL_TIMEOUT_MS`). A local activity needs no heartbeat to be found dead (its worker's workflow
   * task times out: {@link FAST_PATH_LIMITS.workflowTaskTimeoutMs}), but it holds a workflow task slot and is
   * repeated whole after a crash: a tool that declares longer attempts (or a long call) stays a regular activity.
   */
  maxToolTimeoutMs: DEFAULT_TOOL_TIMEOUT_MS,
  /** Default of {@link FastPathOptions.maxLocalCallsPerTask}. */
  maxLocalCallsPerTask: 40,
  /**
   * Retry delays of a local call up to this are waited inside the workflow task; a longer one becomes a
   * server timer (Temporal's `localRetryThreshold`, whose default is one minute).
   */
  localRetryThresholdMs: 10_000,
  /** The most tool calls a fused step runs after its model turn; the workflow runs the others itself. */
  maxFusedCallsPerStep: 8,
  /** The most further turns a fused step asks and runs itself after its own (chained turns). */
  maxChainedTurns: 16,
  /**
   * A fused step asks no further turn once it has run this long: what a signal, an update or a cancellation
   * may wait for the step besides one more turn and its calls.
   */
  chainBudgetMs: 1_000,
  /** The largest {@link FastPathOptions.chainBudgetMs} a run may set. */
  maxChainBudgetMs: 60_000,
  /**
   * A fused step returns no further chained turn once its result holds this many JSON bytes (the turns and the
   * calls' results): the result is a marker in history, far below Temporal's payload limit.
   */
  maxChainResultBytes: 128 * 1024,
  /**
   * The most bytes of a run's first step's result (the catalog, the first turn, its calls and the turns it
   * chained, docs/fast-path.md "The first step"): over it the step returns the catalog alone and the workflow asks
   * the turn itself, whose record and its calls' keys answer at once. The catalog and the first fused step were two
   * markers before; together they stay as far below Temporal's payload limit.
   */
  maxFirstStepResultBytes: 256 * 1024,
  /**
   * The workflow task timeout `startAgentRun` gives a run on the fast path (one that does not opt out with
   * `fastPath: false`) when its caller gives none
   * (Temporal's default: 10 s). A fast-path step runs inside a workflow task, which has no heartbeat: after its
   * worker dies the server hands the task to another worker only when this timeout passes (docs/fast-path.md,
   * "Recovery"). Local activities are not bounded by it (the SDK completes the task at 80% of it and goes on in
   * a new one); a task that cannot finish within it (a replay on a starved worker) is retried, and from its
   * fourth attempt on the server adds 5 s, 10 s, 20 s... (up to 10 min) to its timeout, so it ends up fitting.
   */
  workflowTaskTimeoutMs: 4_000,
} as const;

/** Whether a run input's `fastPath` asks for the fast path (`true` or its options). */
export function fastPathAsked(setting: FastPathSetting | undefined): boolean {
  return setting === true || (typeof setting === 'object' && setting !== null);
}

/** Whether a run input's `fastPath` opts out of the fast path (`false`). */
export function fastPathOptedOut(setting: FastPathSetting | undefined): boolean {
  return setting === false;
}

/**
 * Whether a new run of this input takes the fast path: it asks for it, or says nothing of it (the default of the
 * workers since `patched('durable-tools/engine-2026-12-fast-default')`). What a client starting a run goes by
 * (its workflow task timeout); the workflow decides for itself.
 */
export function fastPathByDefault(setting: FastPathSetting | undefined): boolean {
  return !fastPathOptedOut(setting);
}

/** The `patched()` id under which a run takes the fast path: histories from before it replay unchanged. */
export const FAST_PATH_PATCH = 'fast-path';

/**
 * The `patched()` id under which a fast-path run reads the worker's tool catalog with a local activity (a marker)
 * instead of a regular activity: one server round trip less per generation. Fast-path histories from before it
 * replay their `describeTools` activity.
 */
export const FAST_PATH_CATALOG_PATCH = 'fast-path-local-catalog';

/**
 * The `patched()` id under which a fast-path run fuses a model turn and its pre-cleared tool calls into one
 * local activity (`callModelAndTools`): fast-path histories from before it replay their separate local calls.
 */
export const FAST_PATH_FUSED_PATCH = 'fast-path-fused';

/**
 * The `patched()` id under which a fused step may chain the next turns (`callModelAndTools` asks and runs them
 * itself while the run would certainly ask them locally): histories from before it replay one turn per step.
 */
export const FAST_PATH_CHAIN_PATCH = 'fast-path-chained';

/**
 * The `patched()` id under which a fast-path run decides its other fast-path patches before its first local
 * activity. Evaluated after a local activity, a patch could fall into the next workflow task when the task completed
 * as the local activity resolved, and replay, which resolves the local activity in the first task, did not find it
 * there (test/fixtures/known-issues). Histories from before it replay in their recorded order.
 */
export const FAST_PATH_PATCHES_FIRST_PATCH = 'fast-path-patches-first';
