import { patched } from '@temporalio/workflow';
import type { AgentRunInput } from '../contract/agent-run-types';
import { fastPathAsked, fastPathOptedOut } from '../contract/fast-path';

/**
 * The one `patched()` id a run started since 2026-12-04 records in place of the engine's earlier patches
 * (`durable-tools/run-scoped-keys`, `fast-path-patches-first`, `fast-path`, `fast-path-local-catalog`,
 * `fast-path-fused`, `fast-path-chained`), which it implies: each patch is a marker and an upsert of Temporal's
 * `TemporalChangeVersion` search attribute in history (two events, a visibility update), six of each per fast-path
 * run before it. Evaluated first in a generation; a history without it replays the earlier patches as recorded.
 */
export const ENGINE_2026_12_PATCH = 'durable-tools/engine-2026-12';

/**
 * The one `patched()` id a run started since 2026-12-06 records: it implies {@link ENGINE_2026_12_PATCH}, and on
 * the fast path a first fused step that reads the tool catalog itself (docs/fast-path.md, "The first step"). A
 * history without it replays {@link ENGINE_2026_12_PATCH} (or the patches before it) as recorded.
 */
export const ENGINE_FIRST_STEP_PATCH = 'durable-tools/engine-2026-12-first-step';

/**
 * The one `patched()` id a run started since 2026-12-07 records: it implies {@link ENGINE_FIRST_STEP_PATCH}, and a
 * run whose input says nothing of `fastPath` takes the fast path (docs/fast-path.md, "The default"); its sub-agents
 * inherit the run's `fastPath`. A history without it replays {@link ENGINE_FIRST_STEP_PATCH} (or the patches before
 * it) as recorded: a run that did not ask for the fast path stays on regular activities.
 */
export const ENGINE_FAST_DEFAULT_PATCH = 'durable-tools/engine-2026-12-fast-default';

/** What the engine's patches say of a generation ({@link engineOf}). */
export interface Engine {
  /** The engine's behaviour as of {@link ENGINE_2026_12_PATCH}, without its earlier patches recorded one by one. */
  current: boolean;
  /** A first fused step may read the catalog itself ({@link ENGINE_FIRST_STEP_PATCH}). */
  firstStep: boolean;
  /** The fast path is the default of a run that says nothing of it ({@link ENGINE_FAST_DEFAULT_PATCH}). */
  fastByDefault: boolean;
}

/** The engine of a generation that evaluates no patch: a history from before the engine's patches. */
const NO_PATCHES: Engine = { current: false, firstStep: false, fastByDefault: false };

/**
 * What the engine's patches say of this generation. Evaluated first, and only by a generation that would evaluate
 * one of them: one that asks for the fast path, the first generation of a run that is not a sub-agent (run-scoped
 * keys), or the first generation of a run (a sub-agent too) that says nothing of the fast path (its default). A new
 * run records {@link ENGINE_FAST_DEFAULT_PATCH} only; a history from before it replays what it recorded, and a
 * sub-agent's from before it evaluates nothing further, as it did then.
 */
export function engineOf(input: AgentRunInput): Engine {
  const evaluatedBefore = fastPathAsked(input.fastPath) || (!input.carriedOver && !input.subAgent);
  const mayDefault = !input.carriedOver && !fastPathAsked(input.fastPath) && !fastPathOptedOut(input.fastPath);
  if (!evaluatedBefore && !mayDefault) return NO_PATCHES;
  if (patched(ENGINE_FAST_DEFAULT_PATCH)) return { current: true, firstStep: true, fastByDefault: true };
  if (!evaluatedBefore) return NO_PATCHES;
  if (patched(ENGINE_FIRST_STEP_PATCH)) return { current: true, firstStep: true, fastByDefault: false };
  return { current: patched(ENGINE_2026_12_PATCH), firstStep: false, fastByDefault: false };
}

/**
 * The input a generation runs with: a run whose engine has the fast path by default
 * ({@link Engine.fastByDefault}) and whose input says nothing of it takes `fastPath: true`, which it carries into
 * its next generations (continue-as-new) and lends its sub-agents; any other input is taken as given. A run
 * embedded in a user's workflow (`runAgent`) keeps regular activities: its workflow task timeout is its
 * workflow's, and its steps would hold that workflow's task.
 */
export function withDefaultFastPath(input: AgentRunInput, engine: Engine, embedded: boolean): AgentRunInput {
  if (!engine.fastByDefault || embedded) return input;
  if (fastPathAsked(input.fastPath) || fastPathOptedOut(input.fastPath)) return input;
  return { ...input, fastPath: true };
}

/**
 * An earlier patch of the engine: implied when the generation is `current` ({@link engineOf}), else
 * `patched(patchId)` as a history from before the one patch recorded it.
 */
export function patchedBefore(current: boolean, patchId: string): boolean {
  return current || patched(patchId);
}

/**
 * Typed answers (docs/agents.md): a run with `output` judges its final answer by the worker's check, records a
 * refused one as a step and asks again. Evaluated only by a run that has `output`, when it first answers.
 */
export const TYPED_ANSWERS_PATCH = 'durable-tools/typed-answers';

/**
 * Approve with edits (docs/approvals.md): a decision that carries edited arguments has them checked on the worker
 * (an activity, from the update's handler) and the call runs with them. Evaluated only when a decision edits.
 */
export const APPROVE_WITH_EDITS_PATCH = 'durable-tools/approve-with-edits';
