import { ApplicationFailure } from '@temporalio/common';
import type { ToolErrorObservation } from '../tools/tool-error-code';

/** Engine facts about a failed call that the workflow needs and the model does not (`details[1]`). */
export interface ToolFailureFacts {
  /** False only when the call provably changed nothing (bad arguments, refused before the effect). */
  mayHaveHadEffect: boolean;
}

/**
 * Turns a structured tool error into the failure that crosses the wire: the `type` is the error code,
 * `nonRetryable` follows the observation, the observation itself travels in `details[0]` so the workflow
 * can hand it to the model unchanged, and {@link ToolFailureFacts} in `details[1]` tell the saga whether a
 * compensation is still owed.
 */
export function toolFailure(
  observation: ToolErrorObservation,
  facts: ToolFailureFacts,
  nextRetryDelayMs?: number,
): ApplicationFailure {
  return ApplicationFailure.create({
    type: observation.code,
    message: observation.message,
    nonRetryable: nextRetryDelayMs === undefined,
    details: [observation, facts],
    ...(nextRetryDelayMs !== undefined ? { nextRetryDelay: Math.max(1, Math.round(nextRetryDelayMs)) } : {}),
  });
}
