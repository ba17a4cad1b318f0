import type { RunApprovalPolicy } from '../contract/approval-types';
import { FETCH_TOOL_RESULT_TOOL, offersFetchLater } from '../contract/fetch-tool-result';
import type { CatalogClearer, ClearedTool } from '../contract/fused-step';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { DESCRIBE_TOOLS_TOOL, exceedsCatalogBudget } from '../contract/tool-disclosure';
import { modelVisibleTools, undoToolNames } from '../contract/tool-visibility';
import { opensAtOnce } from './approval-override';
import { isIrreversibleForward } from './effect-tiers';
import { qualifiesLocally } from './local-qualification';

/*
 * Which tools a fused step may run itself (docs/fast-path.md, "The fused step"). Pure, and nothing here imports
 * `@temporalio/workflow`: the workflow clears with it before each fused turn (fused-step.ts), and the first
 * fused step of a run, which reads the catalog itself, clears with it in its activity (`clearCatalog`, which the
 * worker injects), so both decide with the same functions.
 */

/** What the pre-clearance of a tool looks at besides the tool. */
export interface ClearanceContext {
  step: {
    /** The run's fast path; only whether it is on matters here. */
    fastPath?: { readonly on: boolean } | undefined;
    /** The run's undo tools (`undoToolNames`). */
    undoTools: ReadonlySet<string>;
    approvals: { policy: RunApprovalPolicy };
  };
  /** Over the catalog budget, the model sees a summary view and `describe_tools`. */
  disclosedOnDemand: boolean;
  /** Whether a call goes to the background machinery (`BackgroundCalls.handles`). */
  background: { handles(call: { name: string }): boolean };
}

/**
 * Whether every call of the tool that passes the size and effect-tier checks would run as a local activity at
 * once, with no other command before it: the fast path runs it locally (`qualifiesLocally`, unapproved), the
 * approval gate opens without asking (`opensAtOnce`), it registers no compensation (no undo tool), and it is
 * neither an agent tool (a handoff is one), a background (fetch-later) call, `fetch_tool_result` nor `describe_tools`.
 */
export function clearsTool(entry: ToolCatalogEntry, ctx: ClearanceContext): boolean {
  const { step } = ctx;
  return (
    entry.undo === undefined &&
    !step.undoTools.has(entry.name) &&
    entry.agent === undefined &&
    entry.name !== FETCH_TOOL_RESULT_TOOL &&
    !(ctx.disclosedOnDemand && entry.name === DESCRIBE_TOOLS_TOOL) &&
    !ctx.background.handles({ name: entry.name }) &&
    opensAtOnce(entry, step.approvals.policy) &&
    qualifiesLocally(step.fastPath, entry, false)
  );
}

/**
 * The model-visible tools, in their order, that {@link clearsTool} clears, each with its effect-tier mark; none
 * whose attempt timeout is over `maxTimeoutMs` (a run's first step, whose own timeout is set before its catalog).
 */
export function clearedTools(
  visible: Iterable<ToolCatalogEntry>,
  ctx: ClearanceContext,
  maxTimeoutMs = Number.POSITIVE_INFINITY,
): ClearedTool[] {
  const tools: ClearedTool[] = [];
  for (const entry of visible) {
    if (entry.timeoutMs <= maxTimeoutMs && clearsTool(entry, ctx))
      tools.push({ entry, irreversible: isIrreversibleForward(entry, ctx.step.undoTools) });
  }
  return tools;
}

/**
 * The tools of a catalog that the first fused step of a run may run, as the workflow clears them once it has the
 * catalog: what the model sees (`modelVisibleTools`), the disclosure decision (`exceedsCatalogBudget`), the
 * background machinery (`offersFetchLater`) and {@link clearsTool} on a fast path that is on; minus the tools
 * whose attempt timeout is over the rules' bound.
 */
export const clearCatalog: CatalogClearer = (catalog, rules) => {
  const visible = modelVisibleTools(catalog, rules.allowedTools);
  const visibleNames = new Set(visible.map((entry) => entry.name));
  const byName = new Map(catalog.map((entry) => [entry.name, entry]));
  const background = offersFetchLater(visible);
  const disclosedOnDemand = exceedsCatalogBudget(
    catalog.filter((entry) => visibleNames.has(entry.name)),
    rules.toolDisclosure,
  );
  const ctx: ClearanceContext = {
    step: { fastPath: { on: true }, undoTools: undoToolNames(catalog), approvals: { policy: rules.approval } },
    disclosedOnDemand,
    // As BackgroundCalls.handles: only a run that offers fetch-later hands calls to the background.
    background: {
      handles: ({ name }) =>
        background &&
        (name === FETCH_TOOL_RESULT_TOOL ||
          (visibleNames.has(name) && byName.get(name)?.asyncJob?.fetchLater === true)),
    },
  };
  return { tools: clearedTools(visible, ctx, rules.maxToolTimeoutMs), disclosedOnDemand };
};
