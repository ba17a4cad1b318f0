import type { PendingCompensation } from '../../src/contract/agent-run-types';
import { PAYLOAD_LIMITS } from '../../src/contract/payload-limits';
import { buildCarryOver, continueAsNewDue, type GenerationProgress } from '../../src/workflows/run-carry-over';
import { initialLoopCounters } from '../../src/workflows/run-loop-state';
import { initialRunUsage } from '../../src/workflows/run-usage';

const progress = (fields: Partial<GenerationProgress> = {}): GenerationProgress => ({
  suggested: false,
  everySteps: undefined,
  stepsThisGeneration: 0,
  transcriptBytes: 0,
  ...fields,
});

const compensation: PendingCompensation = {
  stepId: 3,
  tool: 'book_flight',
  undo: 'cancel_flight',
  arguments: { flight: 'LX 318' },
  idempotencyKey: 'run/3',
};

describe('the continue-as-new decision', () => {
  test('a young generation goes on', () => {
    expect(continueAsNewDue(progress({ stepsThisGeneration: 40, transcriptBytes: 1_000 }))).toBe(false);
  });

  test("Temporal's suggestion starts a new generation", () => {
    expect(continueAsNewDue(progress({ suggested: true }))).toBe(true);
  });

  test('the run continues as new once it has made its continueAsNewAfterSteps calls in this generation', () => {
    expect(continueAsNewDue(progress({ everySteps: 5, stepsThisGeneration: 5 }))).toBe(true);
  });

  test('the run goes on before it has made its continueAsNewAfterSteps calls', () => {
    expect(continueAsNewDue(progress({ everySteps: 5, stepsThisGeneration: 4 }))).toBe(false);
  });

  test('a generation whose transcript is past the resend budget continues as new', () => {
    const bytes = PAYLOAD_LIMITS.generationTranscriptBytes + 1;

    expect(continueAsNewDue(progress({ transcriptBytes: bytes }))).toBe(true);
  });
});

describe('the carry-over', () => {
  const state = { generation: 1, stepCount: 12, turns: 7, usage: { ...initialRunUsage(), inputTokens: 900 } };
  const parts = {
    compensations: [compensation],
    transcript: { cursor: 20, unsent: [{ role: 'user' as const, content: 'Next.' }] },
    irreversibleDone: true,
    runScopedKeys: true,
  };

  test('carries the counters, the compensations owed, the transcript cursor and the usage totals', () => {
    const counters = { ...initialLoopCounters(undefined), consecutiveToolErrors: 2, stepsThisGeneration: 9 };

    expect(buildCarryOver(state, counters, parts)).toEqual({
      generation: 2,
      stepCount: 12,
      turns: 7,
      consecutiveToolErrors: 2,
      compensations: [compensation],
      transcriptCursor: 20,
      unsentMessages: [{ role: 'user', content: 'Next.' }],
      irreversibleDone: true,
      usage: { inputTokens: 900, outputTokens: 0, unreportedTurns: 0, unpricedTurns: 0 },
      runScopedKeys: true,
    });
  });

  test('a run keyed by its workflow id only carries no runScopedKeys', () => {
    const carried = buildCarryOver(state, initialLoopCounters(undefined), { ...parts, runScopedKeys: false });

    expect('runScopedKeys' in carried).toBe(false);
  });

  test('the next generation starts with the carried error streak and nothing else counted', () => {
    const carried = buildCarryOver(
      state,
      { consecutiveToolErrors: 2, consecutiveTurnIssues: 1, stepsThisGeneration: 9 },
      parts,
    );

    expect(initialLoopCounters(carried)).toEqual({
      consecutiveToolErrors: 2,
      consecutiveTurnIssues: 0,
      stepsThisGeneration: 0,
    });
  });
});
