import { TOOL_ERROR_CODES, type ToolErrorObservation, type ToolObservation } from '../contract/activity-protocol';
import type { AgentRunCarryOver, AgentRunInput } from '../contract/agent-run-types';
import type { AgentRunDryRun, DryRunCall } from '../contract/dry-run-types';

/**
 * A dry run's record while it runs: the source's recorded calls, and those that already answered a call of
 * this run (each recorded call answers one; carried over continue-as-new).
 */
export interface DryRunRecord {
  plan: AgentRunDryRun;
  answered: Set<number>;
}

/** The record of a dry run (undefined for a run that is not dry). */
export function dryRunRecord(input: AgentRunInput, carried: AgentRunCarryOver | undefined): DryRunRecord | undefined {
  if (!input.dryRun) return undefined;
  return { plan: input.dryRun, answered: new Set(carried?.dryRunAnswered ?? []) };
}

/**
 * What the activity of one call of a dry run is told: the recorded calls of its tool that are still unused, and
 * whether a read-only tool may run for real (never one that may need an approval: nobody is asked in a dry run).
 */
export function dryRunCall(record: DryRunRecord, tool: string, mayNeedApproval = false): DryRunCall {
  return {
    readOnlyTools: mayNeedApproval ? 'record' : record.plan.readOnlyTools,
    candidates: record.plan.recorded
      .filter((call) => call.tool === tool && !record.answered.has(call.stepId))
      .map((call) => ({ stepId: call.stepId, digest: call.digest })),
  };
}

/**
 * Takes the recorded observation that answers a call: the source step the activity matched, or — when a call
 * settled in parallel already used it — another unused recorded call of the tool with the same digest.
 * Undefined when none is left (the call is refused as unanswerable).
 */
export function takeRecordedAnswer(
  record: DryRunRecord,
  tool: string,
  sourceStep: number,
  digest: string | undefined,
): { sourceStep: number; observation: ToolObservation; approved: boolean } | undefined {
  const unused = record.plan.recorded.filter((call) => call.tool === tool && !record.answered.has(call.stepId));
  const call =
    unused.find((candidate) => candidate.stepId === sourceStep) ??
    (digest === undefined ? undefined : unused.find((candidate) => candidate.digest === digest));
  if (!call) return undefined;
  record.answered.add(call.stepId);
  return { sourceStep: call.stepId, observation: call.observation, approved: call.approved === true };
}

/** The refusal of a call whose recorded answer was already used by another call of the same turn. */
export function recordUsedUp(tool: string): ToolErrorObservation {
  return {
    status: 'error',
    code: TOOL_ERROR_CODES.DRY_RUN_NO_RECORD,
    message: `This is a dry run and the recorded call of "${tool}" with these arguments already answered another call; nothing was run.`,
    hint: 'This is a dry run: each recorded call answers one call. Nothing was executed; finish or try another step.',
    retryable: false,
    attempts: 0,
  };
}
