import type { ToolApproval, ToolEffect } from './tool-catalog-entry';

/**
 * Decides, from a call's validated arguments, whether that call needs a human's approval (e.g. payments
 * above a limit). It runs on the worker, inside the engine's `evaluateApproval` activity, so its answer is
 * recorded in the run's history and replay never runs it again. A predicate that throws counts as `true`.
 */
export type ApprovalPredicate<I = unknown> = (input: I) => boolean | Promise<boolean>;

/** What a tool declares: `'never'`, `'always'`, or a predicate on its validated arguments. */
export type ToolApprovalPolicy<I = unknown> = 'never' | 'always' | ApprovalPredicate<I>;

/** Default time a call waits for a decision before it counts as rejected: 24 hours. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 24 * 60 * 60 * 1000;

/**
 * The approval a tool gets when it declares none, by effect tier: irreversible tools need approval, and so
 * do tools from an untrusted source (an MCP server not marked trusted) unless they are read-only.
 *
 * @example
 * ```ts
 * defaultApproval({ effect: 'irreversible' }); // 'always'
 * defaultApproval({ effect: 'compensable', untrusted: true }); // 'always'
 * defaultApproval({ effect: 'read-only', untrusted: true }); // 'never'
 * ```
 */
export function defaultApproval(tool: {
  effect: ToolEffect;
  untrusted?: boolean;
}): Exclude<ToolApproval, 'conditional'> {
  if (tool.effect === 'irreversible') return 'always';
  if (tool.untrusted === true && tool.effect !== 'read-only') return 'always';
  return 'never';
}

/** The catalog's word for a declared policy (a predicate becomes `conditional`). */
export function catalogApproval(
  declared: ToolApprovalPolicy<never> | undefined,
  tool: { effect: ToolEffect; untrusted?: boolean },
): ToolApproval {
  if (declared === undefined) return defaultApproval(tool);
  return typeof declared === 'function' ? 'conditional' : declared;
}
