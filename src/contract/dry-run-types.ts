/**
 * Dry runs (docs/fork.md): what a dry fork or re-run carries in its input, what each of its tool calls tells
 * the activity, and what its state shows. Pure: shared by the client, the workflow and the activities.
 */
import type { ToolObservation } from './activity-protocol';

/** How a dry run answers calls of read-only tools: run them for real (`'run'`) or only from the record. */
export type DryRunReadOnlyTools = 'run' | 'record';

/**
 * One call of the source run a dry run may be answered from: the tool, the digest of its validated arguments
 * and the observation the source recorded for it (redacted and bounded as the source's state showed it).
 */
export interface DryRunRecordedCall {
  /** The source's step id. */
  stepId: number;
  tool: string;
  /** `argumentsDigest` of the source call's validated arguments (SHA-256 of their canonical JSON). */
  digest: string;
  observation: ToolObservation;
  /** Set when a human approved the source call: like a live run, the dry run lets compensable calls follow it. */
  approved?: true;
}

/**
 * The record a dry run is answered from (`AgentRunInput.dryRun`, set by `forkAgentRun` with `dryRun`): the
 * source's recorded calls from the fork point on, each answering at most one call of the dry run.
 */
export interface AgentRunDryRun {
  /** Workflow id of the recorded run. */
  sourceWorkflowId: string;
  /** Read-only tools run for real (default) or are answered from the record like the others. */
  readOnlyTools: DryRunReadOnlyTools;
  /** The source's calls from the fork point on that passed validation, in step order. */
  recorded: DryRunRecordedCall[];
}

/**
 * What a tool activity of a dry run is told (`ToolActivityInput.dryRun`): the recorded calls of this tool not
 * yet used. The activity never runs the tool's code for a call with effects (nor a read-only one under
 * `'record'`): it answers which recorded call matches, or refuses with `DRY_RUN_NO_RECORD`.
 */
export interface DryRunCall {
  readOnlyTools: DryRunReadOnlyTools;
  /** The candidates, in step order: the first with the same digest answers. */
  candidates: Array<{ stepId: number; digest: string }>;
}

/** How a dry run answered one step (`StepRecord.dryRun`). */
export interface DryRunStepAnswer {
  /** `recorded`: from the source's step `sourceStep`; `refused`: nothing matched; `ran`: a read-only tool ran. */
  answer: 'recorded' | 'refused' | 'ran';
  sourceStep?: number;
}

/**
 * The activity type of a tool's calls in a dry run: `dry:<tool>` (`:` is never part of a tool name). Workers
 * register it beside the tool's own type, and its activity is always dry: a worker of a version without dry
 * runs has no such activity and fails the call as not registered instead of running the tool.
 */
export function dryRunActivityType(tool: string): string {
  return `${DRY_RUN_ACTIVITY_PREFIX}${tool}`;
}

/** The prefix of {@link dryRunActivityType}. */
export const DRY_RUN_ACTIVITY_PREFIX = 'dry:';
