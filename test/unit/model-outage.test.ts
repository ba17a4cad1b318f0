import {
  MODEL_OUTAGE,
  durationText,
  gaveUpText,
  isModelOutageType,
  outageBackoffMs,
  outageWaitMs,
  waitingText,
} from '../../src/contract/model-outage';

const WAIT = {
  provider: 'openai',
  model: 'gpt-test',
  since: Date.parse('2026-12-07T10:00:00.000Z'),
  attempts: 12,
  lastCode: 'MODEL_UNAVAILABLE',
  lastError: 'connect ECONNREFUSED 127.0.0.1:1',
};

describe('waiting out a model provider outage', () => {
  test('unreachable, overloaded and rate-limited providers are outages; permanent errors and timeouts are not', () => {
    expect(['MODEL_UNAVAILABLE', 'MODEL_OVERLOADED', 'MODEL_RATE_LIMITED'].map(isModelOutageType)).toEqual([
      true,
      true,
      true,
    ]);
    expect(['MODEL_AUTHENTICATION_FAILED', 'MODEL_REQUEST_REJECTED', 'MODEL_TIMEOUT'].map(isModelOutageType)).toEqual([
      false,
      false,
      false,
    ]);
  });

  test('the window is one hour unless the model settings say outageWaitMs', () => {
    expect(outageWaitMs({ provider: 'openai' })).toBe(60 * 60_000);
    expect(outageWaitMs({ provider: 'openai', outageWaitMs: 5_000 })).toBe(5_000);
    expect(outageWaitMs({ provider: 'openai', outageWaitMs: -1 })).toBe(MODEL_OUTAGE.waitMs);
  });

  test('the pause between asks doubles from 2 s to at most 30 s, jittered over its upper half', () => {
    expect(outageBackoffMs(1, () => 0, 1e9)).toBe(1_000);
    expect(outageBackoffMs(1, () => 1, 1e9)).toBe(2_000);
    expect(outageBackoffMs(3, () => 1, 1e9)).toBe(8_000);
    expect(outageBackoffMs(20, () => 1, 1e9)).toBe(30_000);
    expect(outageBackoffMs(20, () => 0, 1e9)).toBe(15_000);
  });

  test("the provider's own delay is waited, but never past the end of the window", () => {
    expect(outageBackoffMs(1, () => 0, 1e9, 120_000)).toBe(120_000);
    expect(outageBackoffMs(1, () => 0, 5_000, 120_000)).toBe(5_000);
  });

  test('the run shows which provider it waits for, since when, and the last error', () => {
    expect(waitingText(WAIT)).toBe(
      'waiting for model provider openai (gpt-test) since 2026-12-07T10:00:00.000Z (12 attempts; last: MODEL_UNAVAILABLE: connect ECONNREFUSED 127.0.0.1:1)',
    );
  });

  test('giving up says how many attempts over how long, and what to raise', () => {
    expect(gaveUpText(WAIT, WAIT.since + 61 * 60_000, 60 * 60_000)).toBe(
      'The model provider openai (gpt-test) was down or overloaded since 2026-12-07T10:00:00.000Z: gave up after 12 attempts ' +
        'over 1 h 1 min (last: connect ECONNREFUSED 127.0.0.1:1). Raise outageWaitMs in the model settings (now 1 h 0 min) to wait longer.',
    );
    expect(durationText(40_000)).toBe('40 s');
    expect(durationText(192_000)).toBe('3 min 12 s');
  });
});
