import type { AgentRunState } from '../contract/agent-run-types';
import type { AgentRunDryRun, DryRunReadOnlyTools } from '../contract/dry-run-types';
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
    }));
  return { sourceWorkflowId: source.workflowId, readOnlyTools, recorded };
}
