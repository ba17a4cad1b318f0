import type { ToolObservation } from '../contract/activity-protocol';
import { boundObservation } from '../contract/bound-observation';
import { jsonByteLength, PAYLOAD_LIMITS } from '../contract/payload-limits';

/** Every observation keeps at least this much of the turn's budget, however much the turn already used. */
export const MIN_TURN_OBSERVATION_BYTES = 1_024;

/**
 * One observation of a turn as the transcript keeps it: within what is left of the turn's budget
 * ({@link PAYLOAD_LIMITS.turnObservationBytes}, at least {@link MIN_TURN_OBSERVATION_BYTES}), so one turn's
 * observations together stay within budget and later ones are shortened. Returns it and the bytes the turn
 * has used with it.
 */
export function boundTurnObservation(
  observation: ToolObservation,
  usedBytes: number,
): { observation: ToolObservation; usedBytes: number } {
  const bounded = boundObservation(
    observation,
    Math.max(MIN_TURN_OBSERVATION_BYTES, PAYLOAD_LIMITS.turnObservationBytes - usedBytes),
    'This turn returned too much; call fewer tools per turn, or read stored outputs page by page.',
  );
  return { observation: bounded, usedBytes: usedBytes + jsonByteLength(bounded) };
}
