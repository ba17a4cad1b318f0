import type { ToolObservation } from '../contract/activity-protocol';
import type { AgentRunFork, AgentRunState, StepRecord } from '../contract/agent-run-types';
import { isStoredOutputReference, type ShortenedValue } from '../contract/claim-check-reference';
import { AgentRunForkError } from './agent-run-fork-error';

/** Step statuses of a step that has not settled: nothing to take over from it. */
const UNSETTLED: ReadonlySet<StepRecord['status']> = new Set(['pending', 'awaiting_approval', 'running']);

/**
 * The recorded prefix of a finished run that a fork from step `fromStep` starts from: the source's steps 1 to
 * `fromStep - 1` as it recorded them, and the model turns they took. A claim-checked output is carried as its
 * preview: the stored output belongs to the source run, which alone may read it (docs/run-ownership.md).
 *
 * @throws {@link AgentRunForkError} `INVALID_FROM_STEP`, `NOT_ENOUGH_STEPS` (the source has fewer than
 * `fromStep - 1` steps), `PREFIX_NOT_RECORDED` (steps of an earlier continue-as-new generation, or left out of
 * the state for size), `STEP_NOT_SETTLED`.
 */
export function buildForkPrefix(source: { workflowId: string; state: AgentRunState }, fromStep: number): AgentRunFork {
  const { workflowId, state } = source;
  if (!Number.isInteger(fromStep) || fromStep < 1) {
    throw new AgentRunForkError(
      `fromStep must be a whole number of at least 1 (got ${fromStep}).`,
      'INVALID_FROM_STEP',
    );
  }
  const wanted = fromStep - 1;
  if (state.stepCount < wanted) {
    throw new AgentRunForkError(
      `Run ${workflowId} has ${state.stepCount} steps: a fork from step ${fromStep} needs steps 1 to ${wanted} ` +
        `from it. Fork from step ${state.stepCount + 1} at most.`,
      'NOT_ENOUGH_STEPS',
    );
  }
  const steps = state.steps.filter((step) => step.stepId <= wanted).sort((a, b) => a.stepId - b.stepId);
  if (steps.length !== wanted || steps.some((step, index) => step.stepId !== index + 1)) {
    throw new AgentRunForkError(
      `Run ${workflowId} no longer has the records of steps 1 to ${wanted} in its state (they are in an earlier ` +
        `continue-as-new generation or were left out for size); it can be forked only from steps it still shows.`,
      'PREFIX_NOT_RECORDED',
    );
  }
  const unsettled = steps.find((step) => step.observation === undefined || UNSETTLED.has(step.status));
  if (unsettled) {
    throw new AgentRunForkError(
      `Step ${unsettled.stepId} of run ${workflowId} never settled (${unsettled.status}); fork from step ${unsettled.stepId} or earlier.`,
      'STEP_NOT_SETTLED',
    );
  }
  return {
    sourceWorkflowId: workflowId,
    ...(state.runKey !== undefined ? { sourceRunKey: state.runKey } : {}),
    fromStep,
    turns: steps.at(-1)?.turn ?? 0,
    steps: steps.map((step) => forkedRecord(step, workflowId)),
  };
}

/** A step record as the fork carries it: without live progress, a stored output as its preview. */
function forkedRecord(step: StepRecord, workflowId: string): StepRecord {
  const { progress: _progress, ...record } = step;
  return { ...record, observation: withPreviewOfStoredOutput(step.observation!, workflowId) };
}

/** A recorded observation as another run carries it: a claim-checked output as its preview (docs/fork.md). */
export function withPreviewOfStoredOutput(observation: ToolObservation, workflowId: string): ToolObservation {
  if (observation.status !== 'ok' || !isStoredOutputReference(observation.output)) return observation;
  const stored = observation.output;
  const preview: ShortenedValue = {
    $durableTools: 'shortened',
    bytes: stored.bytes,
    preview: stored.preview,
    note: `The whole output was stored by run ${workflowId}; this forked run sees its preview only.`,
  };
  return { ...observation, output: preview };
}
