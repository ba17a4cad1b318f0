import type { ToolObservation } from '../../src/contract/activity-protocol';
import { jsonByteLength, PAYLOAD_LIMITS } from '../../src/contract/payload-limits';
import { boundTurnObservation, MIN_TURN_OBSERVATION_BYTES } from '../../src/workflows/turn-observations';

const output = (bytes: number): ToolObservation => ({ status: 'ok', output: 'x'.repeat(bytes) });

describe("a turn's observation budget", () => {
  test('an observation that fits what is left of the budget is kept whole and counted', () => {
    const observation = output(1_000);

    const bounded = boundTurnObservation(observation, 5_000);

    expect(bounded.observation).toBe(observation);
    expect(bounded.usedBytes).toBe(5_000 + jsonByteLength(observation));
  });

  test('an observation past what is left of the budget is shortened to a preview', () => {
    const used = PAYLOAD_LIMITS.turnObservationBytes - 10_000;

    const bounded = boundTurnObservation(output(20_000), used);

    expect(bounded.observation).toMatchObject({ status: 'ok', output: { $durableTools: 'shortened' } });
    expect(JSON.stringify(bounded.observation)).toContain('call fewer tools per turn');
  });

  test('a turn that used its whole budget still keeps a small observation whole', () => {
    const observation = output(MIN_TURN_OBSERVATION_BYTES / 2);

    expect(boundTurnObservation(observation, PAYLOAD_LIMITS.turnObservationBytes).observation).toBe(observation);
  });
});
