import { dryRunActivityType } from '../contract/dry-run-types';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { runOverride } from './approval-override';
import { dryRunCall, type DryRunRecord } from './dry-run-step';
import type { CallExecutor, StepContext } from './run-types';

/**
 * The call executor of a dry run (docs/fork.md, "Dry runs"): each call goes to its tool's dry-run twin, an activity type
 * workers run only dry (dry-run-types.ts), with what the source's record can answer it with; where it runs is
 * the generation's own executor's choice (`runs`). Chosen once per generation by run-loop.ts.
 */
export function dryRunCalls(ctx: StepContext, record: DryRunRecord, runs: CallExecutor): CallExecutor {
  return {
    start: (call) =>
      runs.start({
        ...call,
        activityType: dryRunActivityType(call.entry.name),
        input: { ...call.input, dryRun: dryRunCall(record, call.entry.name, mayNeedApproval(call.entry, ctx)) },
        summarized: { dryRun: true },
      }),
  };
}

/**
 * Whether a call of the tool may wait for a human in a live run. A dry run asks nobody, so such a read-only
 * tool is answered from the record there, never run for real.
 */
function mayNeedApproval(entry: ToolCatalogEntry, ctx: StepContext): boolean {
  const override = runOverride(entry, ctx.approvals.policy);
  return override === 'always' || (entry.approval !== 'never' && override !== 'never');
}
