import type { AgentRunInput, StepRecord } from '../../src/contract/agent-run-types';
import {
  backgroundFailureVerdict,
  failurePolicyVerdict,
  nextToolErrorStreak,
} from '../../src/workflows/failure-policy';

const input = (failurePolicy?: AgentRunInput['failurePolicy']): AgentRunInput => ({
  goal: 'Book a trip.',
  model: { provider: 'scripted' },
  ...(failurePolicy ? { failurePolicy } : {}),
});

function failed(tool: string, stepId = 1, retryable = false): StepRecord {
  return {
    stepId,
    turn: 1,
    toolCallId: `call_${stepId}`,
    tool,
    arguments: {},
    idempotencyKey: `run/${stepId}`,
    status: 'failed',
    observation: { status: 'error', code: 'CONFLICT', message: 'No seats.', hint: '', retryable, attempts: 1 },
  };
}

const succeeded = (tool: string): StepRecord => ({
  ...failed(tool),
  status: 'succeeded',
  observation: { status: 'ok', output: { ok: true } },
});

describe('the failure policy', () => {
  test('a failed step adds one to the streak of failed calls', () => {
    expect(nextToolErrorStreak(2, failed('book_flight'))).toBe(3);
  });

  test('a step that did not fail ends the streak', () => {
    expect(nextToolErrorStreak(2, succeeded('book_flight'))).toBe(0);
  });

  test('without a policy a failed step is only an observation', () => {
    expect(failurePolicyVerdict(failed('book_flight'), input(), 5)).toBeUndefined();
  });

  test('a critical tool that failed permanently aborts the run, saying how', () => {
    expect(failurePolicyVerdict(failed('book_flight', 4), input({ criticalTools: ['book_flight'] }), 1)).toBe(
      'Step 4 (book_flight) failed permanently with CONFLICT: No seats.',
    );
  });

  test('a critical tool that failed with a retryable error aborts the run too: no attempt was left', () => {
    const reason = failurePolicyVerdict(failed('book_flight', 4, true), input({ criticalTools: '*' }), 1);

    expect(reason).toBe('Step 4 (book_flight) failed with CONFLICT (no attempt left): No seats.');
  });

  test('a critical tool that succeeded does not abort the run', () => {
    expect(failurePolicyVerdict(succeeded('book_flight'), input({ criticalTools: '*' }), 0)).toBeUndefined();
  });

  test('a streak of failures as long as maxConsecutiveToolErrors aborts the run', () => {
    expect(failurePolicyVerdict(failed('search', 7), input({ maxConsecutiveToolErrors: 3 }), 3)).toBe(
      '3 tool calls failed in a row (last: step 7, search).',
    );
  });

  test('a shorter streak of failures does not abort the run', () => {
    expect(failurePolicyVerdict(failed('search'), input({ maxConsecutiveToolErrors: 3 }), 2)).toBeUndefined();
  });

  test('background failures are judged one by one, not as a streak', () => {
    const records = [failed('search', 1), failed('search', 2)];

    expect(backgroundFailureVerdict(records, input({ maxConsecutiveToolErrors: 1 }))).toBeUndefined();
  });

  test('the first critical background failure is the reason the run aborts', () => {
    const records = [failed('search', 1), failed('book_flight', 2), failed('book_hotel', 3)];
    const policy = input({ criticalTools: ['book_flight', 'book_hotel'] });

    expect(backgroundFailureVerdict(records, policy)).toMatch(/^Step 2 \(book_flight\)/);
  });
});
