import type { ToolObservation } from '../contract/activity-protocol';
import type { StepRecord } from '../contract/agent-run-types';
import { boundObservation } from '../contract/bound-observation';
import type { TranscriptMessage } from '../contract/model-types';
import { PAYLOAD_LIMITS } from '../contract/payload-limits';
import { redactDeep } from '../contract/sensitive-arguments';
import type { ToolActivityResult } from '../contract/tool-activity-types';

/*
 * What a call that returned puts in its step and in the transcript. Pure, and nothing here imports
 * `@temporalio/workflow`: a fused step that chains turns builds the next turn's messages with these very
 * functions (fused-chain-plan.ts).
 */

/** The observation of a call that returned: its output, redacted, within the tool output budget. */
export function successObservation(result: ToolActivityResult, secrets: readonly string[]): ToolObservation {
  return boundObservation(
    {
      status: 'ok',
      output: redactDeep(result.output, secrets),
      ...(result.replayed ? { replayed: true } : {}),
      ...(result.cached ? { cached: true } : {}),
    },
    PAYLOAD_LIMITS.maxToolOutputBytes,
    'The output was larger than any tool may return inline.',
  );
}

/** The transcript message of a settled step, with its observation as the turn's budget left it. */
export function toolMessage(
  step: Pick<StepRecord, 'toolCallId' | 'tool' | 'stepId'>,
  observation: ToolObservation,
): TranscriptMessage {
  return { role: 'tool', toolCallId: step.toolCallId, name: step.tool, stepId: step.stepId, observation };
}
