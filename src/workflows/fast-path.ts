import type { LocalActivityOptions } from '@temporalio/workflow';
import type { AgentRunInput } from '../contract/agent-run-types';
import {
  FAST_PATH_CATALOG_PATCH,
  FAST_PATH_CHAIN_PATCH,
  FAST_PATH_FUSED_PATCH,
  FAST_PATH_LIMITS,
  FAST_PATH_PATCH,
  FAST_PATH_PATCHES_FIRST_PATCH,
  fastPathAsked,
  type FastPathOptions,
} from '../contract/fast-path';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { patchedBefore } from './engine-patches';
import { qualifiesLocally } from './local-qualification';
import { localToolOptions, type SummaryMarks } from './tool-call-options';

/**
 * The fast path of one generation of a run (docs/fast-path.md): whether it is on, and how many local calls
 * ran since the workflow task last ended. Lives in the run loop; its decisions depend on the run's input and
 * the order of its calls only, so they replay identically.
 */
export interface FastPath {
  on: boolean;
  modelTurns: boolean;
  /** Whether a local model turn also runs its pre-cleared tool calls (fused-step.ts). */
  fused: boolean;
  /** Whether a fused step may go on with the next turns itself (chained turns, fused-step.ts). */
  chained: boolean;
  /** How long a fused step goes on asking further turns, in ms. */
  chainBudgetMs: number;
  maxLocalCallsPerTask: number;
  /** Local calls since the last regular activity of this generation (one that ended the workflow task). */
  localCalls: number;
}

/**
 * The fast path of a run that asked for it (`fastPath`), recorded with `patched('fast-path')` so a history
 * from before it replays its regular activities. A run that did not ask records nothing.
 */
export function fastPathOf(input: AgentRunInput, current = false): FastPath {
  const setting = input.fastPath;
  const options: FastPathOptions = typeof setting === 'object' && setting !== null ? setting : {};
  const max = options.maxLocalCallsPerTask;
  const on = fastPathAsked(input.fastPath) && patchedBefore(current, FAST_PATH_PATCH);
  const modelTurns = options.modelTurns !== false;
  // Recorded only by runs that could fuse: a run without local turns issues the same commands as before.
  const fused = on && modelTurns && options.fusedSteps !== false && patchedBefore(current, FAST_PATH_FUSED_PATCH);
  return {
    on,
    modelTurns,
    fused,
    chained: fused && options.chainedTurns !== false && patchedBefore(current, FAST_PATH_CHAIN_PATCH),
    chainBudgetMs: chainBudgetOf(options.chainBudgetMs),
    maxLocalCallsPerTask:
      typeof max === 'number' && Number.isFinite(max) && max >= 1
        ? Math.floor(max)
        : FAST_PATH_LIMITS.maxLocalCallsPerTask,
    localCalls: 0,
  };
}

/** The run's chain budget: its own within 0 and {@link FAST_PATH_LIMITS.maxChainBudgetMs}, else the default. */
function chainBudgetOf(ms: unknown): number {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) return FAST_PATH_LIMITS.chainBudgetMs;
  return Math.min(Math.floor(ms), FAST_PATH_LIMITS.maxChainBudgetMs);
}

/**
 * The run's fast path decided before its first local activity (the catalog read), when the run records that
 * order (`patched('fast-path-patches-first')`); undefined for a history from before it, which decides it after.
 */
export function fastPathDecidedFirst(input: AgentRunInput, current: boolean): FastPath | undefined {
  if (!fastPathAsked(input.fastPath)) return undefined;
  return patchedBefore(current, FAST_PATH_PATCHES_FIRST_PATCH) ? fastPathOf(input, current) : undefined;
}

/**
 * Whether this generation reads the tool catalog with a local activity: on the fast path, recorded with
 * `patched('fast-path-local-catalog')` (fast-path histories from before it replay their regular activity).
 */
export function catalogReadLocally(input: AgentRunInput, current: boolean): boolean {
  return fastPathAsked(input.fastPath) && patchedBefore(current, FAST_PATH_CATALOG_PATCH);
}

/**
 * Whether a tool call past its gates runs as a local activity. It qualifies when it is short (an attempt
 * timeout the engine would not heartbeat: at most {@link FAST_PATH_LIMITS.maxToolTimeoutMs}) and needs
 * nothing a local activity lacks: no long call (heartbeats, checkpoints), no async job (a callback), no
 * approval (a human's decision already ended the workflow task), and no `execution: 'activity'` of its own
 * (the tool's author keeps it regular). A read-only tool declared `execution: 'local'` runs locally whatever
 * the run says. Counts the local call.
 */
export function toolRunsLocally(fast: FastPath | undefined, entry: ToolCatalogEntry, approved: boolean): boolean {
  return qualifiesLocally(fast, entry, approved) ? countLocal(fast) : endsTask(fast);
}

/**
 * Whether the next model turn runs as a local activity: on the fast path, unless the run keeps its turns
 * regular or {@link FastPath.maxLocalCallsPerTask} local calls ran in a row, when this turn is a regular
 * activity that ends the workflow task (and records the local results in history).
 */
export function modelTurnRunsLocally(fast: FastPath): boolean {
  if (!fast.on || !fast.modelTurns || fast.localCalls >= fast.maxLocalCallsPerTask) return endsTask(fast);
  return countLocal(fast);
}

function countLocal(fast: FastPath | undefined): true {
  if (fast) fast.localCalls += 1;
  return true;
}

function endsTask(fast: FastPath | undefined): false {
  if (fast) fast.localCalls = 0;
  return false;
}

/**
 * Options of a tool call on the fast path: those of a local tool, with retry delays above
 * {@link FAST_PATH_LIMITS.localRetryThresholdMs} waited on a server timer rather than inside the task.
 */
export function fastPathToolOptions(
  entry: ToolCatalogEntry,
  redactedArguments: unknown,
  marks: SummaryMarks = {},
): LocalActivityOptions {
  return {
    ...localToolOptions(entry, redactedArguments, marks),
    localRetryThreshold: FAST_PATH_LIMITS.localRetryThresholdMs,
  };
}
