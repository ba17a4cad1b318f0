import type { AgentRunState } from '../contract/agent-run-types';
import type { AgentRunDryRun, DryRunReadOnlyTools } from '../contract/dry-run-types';
import type { ToolObservation } from '../contract/activity-protocol';
import { boundObservation } from '../contract/bound-observation';
import { jsonByteLength, PAYLOAD_LIMITS } from '../contract/payload-limits';
import { withPreviewOfStoredOutput } from './fork-prefix';

/** Step statuses of a step that never settled: it answers nothing. */
const UNSETTLED = new Set(['pending', 'awaiting_approval', 'running']);

/**
 * The record a dry fork from `fromStep` (1: a dry re-run of the whole run) is answered from: the source's
 * steps from `fromStep` on that its state still shows, that reached their tool's activity (they have the
 * digest of their validated arguments) and settled, each with the observation the source recorded —
 * redacted and bounded as the state shows it, a claim-checked output as its preview. A forked step of the
 * source answers like any other (it is what the source saw). Steps the state no longer shows (earlier
 * continue-as-new generations, left out for size) and steps recorded before digests were recorded are not in
 * the record: calls they would answer are refused.
 */
export function buildDryRunRecord(
  source: { workflowId: string; state: AgentRunState },
  fromStep: number,
  readOnlyTools: DryRunReadOnlyTools,
): AgentRunDryRun {
  const recorded = source.state.steps
    .filter(
      (step) =>
        step.stepId >= fromStep &&
        typeof step.argumentsDigest === 'string' &&
        step.observation !== undefined &&
        !UNSETTLED.has(step.status) &&
        // A refusal of an earlier dry run answers nothing: it recorded no outcome of the tool.
        step.dryRun?.answer !== 'refused',
    )
    .sort((a, b) => a.stepId - b.stepId)
    .map((step) => ({
      stepId: step.stepId,
      tool: step.tool,
      digest: step.argumentsDigest!,
      observation: withPreviewOfStoredOutput(step.observation!, source.workflowId),
      ...(step.approval?.decision === 'approved' ? { approved: true as const } : {}),
    }));
  return { sourceWorkflowId: source.workflowId, readOnlyTools, recorded };
}

/** Note on a recorded output a dry run carries as a preview only. */
const SHORTENED_NOTE = "The recorded output was shortened to fit the dry run's input; this is its preview.";

/**
 * The record within `maxBytes` of JSON: while it is larger, the largest recorded output is replaced by its
 * preview (a `shortened` value of `PAYLOAD_LIMITS.previewChars` characters), so a dry run of a run with large
 * outputs still starts; the calls they answer see the preview. Errors and previews are kept as they are. The
 * result may still be larger when nothing is left to shorten (the caller refuses it then).
 */
export function fitDryRunRecord(record: AgentRunDryRun, maxBytes: number): AgentRunDryRun {
  let bytes = jsonByteLength(record);
  if (bytes <= maxBytes) return record;
  const recorded = record.recorded.map((call) => ({ ...call }));
  const bySize = recorded
    .map((call, index) => ({ index, bytes: jsonByteLength(call.observation) }))
    .filter(({ index }) => isShortenable(recorded[index]!.observation))
    .sort((a, b) => b.bytes - a.bytes);
  for (const { index, bytes: before } of bySize) {
    if (bytes <= maxBytes) break;
    const call = recorded[index]!;
    call.observation = boundObservation(call.observation, 0, SHORTENED_NOTE);
    bytes -= before - jsonByteLength(call.observation);
  }
  return { ...record, recorded };
}

/** Whether an observation has an output that a preview would make smaller. */
function isShortenable(observation: ToolObservation): boolean {
  if (observation.status !== 'ok') return false;
  const output = observation.output as { $durableTools?: unknown } | null;
  const marked = typeof output === 'object' && output !== null && '$durableTools' in output;
  return !marked && jsonByteLength(output) > PAYLOAD_LIMITS.previewChars;
}
