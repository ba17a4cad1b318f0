import { ApplicationFailure } from '@temporalio/common';
import type { ToolErrorObservation } from '../tools/tool-error-code';

/**
 * Turns a structured tool error into the failure that crosses the wire: the `type` is the error code,
 * `nonRetryable` follows the observation, and the observation itself travels in `details[0]` so the
 * workflow can hand it to the model unchanged.
 */
export function toolFailure(observation: ToolErrorObservation, nextRetryDelayMs?: number): ApplicationFailure {
  return ApplicationFailure.create({
    type: observation.code,
    message: observation.message,
    nonRetryable: nextRetryDelayMs === undefined,
    details: [observation],
    ...(nextRetryDelayMs !== undefined ? { nextRetryDelay: Math.max(1, Math.round(nextRetryDelayMs)) } : {}),
  });
}
