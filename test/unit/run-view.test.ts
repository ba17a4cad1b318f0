/**
 * The step lines of `durable-tools run`, `show` and `npm start`: whole errors wrapped to the width, events in
 * the order they happened, retries, undo lines after their cause, token usage and plurals.
 */
import {
  LiveSteps,
  outputWidth,
  progressLine,
  runSummary,
  stepsTable,
  wrap,
  DEFAULT_OUTPUT_WIDTH,
} from '../../src/cli/run-view';
import type { ToolErrorObservation } from '../../src/contract/activity-protocol';
import type { AgentRunState, StepRecord } from '../../src/contract/agent-run-types';

const LONG_HINT =
  'Fix and call again: `passengers` must be a number, not a string: write 2 without quotes, and keep every other field as it was in the first call.';

const INVALID: ToolErrorObservation = {
  status: 'error',
  code: 'INVALID_ARGUMENTS',
  message: "The arguments do not match the tool's input schema (1 problem).",
  hint: LONG_HINT,
  retryable: false,
  attempts: 0,
};

const DECLINED: ToolErrorObservation = {
  status: 'error',
  code: 'PERMISSION_DENIED',
  message: 'The card was declined by the issuing bank for this amount.',
  hint: 'Do not retry the payment; ask the user for another card.',
  retryable: false,
  attempts: 1,
};

function step(stepId: number, fields: Partial<StepRecord>): StepRecord {
  return {
    stepId,
    turn: stepId,
    toolCallId: `call-${stepId}`,
    tool: 'tool',
    arguments: {},
    idempotencyKey: `run/${stepId}`,
    status: 'pending',
    ...fields,
  };
}

function state(steps: StepRecord[], fields: Partial<AgentRunState> = {}): AgentRunState {
  return {
    workflowId: 'run',
    runId: 'run',
    goal: 'Book a trip',
    status: 'running',
    turns: steps.length,
    stepCount: steps.length,
    generation: 0,
    steps,
    policyWarnings: [],
    usage: { inputTokens: 0, outputTokens: 0, unreportedTurns: 0, unpricedTurns: 0, turns: [] },
    ...fields,
  };
}

/** The summary lines of a run of `turns` model turns and `steps`, whose model reported `usage`, as one text. */
function summaryOf(steps: StepRecord[], turns: number, usage: Partial<AgentRunState['usage']>): string {
  const fullUsage = { ...state([]).usage, ...usage };
  return runSummary(state(steps, { turns, stepCount: steps.length, usage: fullUsage })).join('\n');
}

/** Every word of `text` appears in `output`, in order. */
function expectWhole(output: string, text: string): void {
  expect(output.replace(/\s+/g, ' ')).toContain(text.replace(/\s+/g, ' '));
}

describe('wrap', () => {
  test('keeps every word and no line is longer than the width', () => {
    const lines = wrap(LONG_HINT, 40, 'Hint: ', '      ');
    expect(lines.every((line) => line.length <= 40)).toBe(true);
    expectWhole(lines.join(' '), LONG_HINT);
  });

  test('leaves a word longer than a line whole on a line of its own', () => {
    const word = 'x'.repeat(60);
    expect(wrap(`a ${word} b`, 20)).toEqual(['a', word, 'b']);
  });

  test('wraps to 100 columns when the output is not a terminal, and to the terminal otherwise', () => {
    expect(outputWidth(false, 200)).toBe(DEFAULT_OUTPUT_WIDTH);
    expect(outputWidth(true, 132)).toBe(132);
    expect(outputWidth(true, undefined)).toBe(DEFAULT_OUTPUT_WIDTH);
  });
});

describe('LiveSteps', () => {
  function printedLines(states: AgentRunState[], width = 100): string[] {
    const lines: string[] = [];
    const live = new LiveSteps((line) => lines.push(line), width);
    for (const s of states) live.update(s);
    return lines;
  }

  /** A hotel booked (in `hotelStatus`, undone by cancel_hotel), then a payment declined. */
  function bookedThenDeclined(hotelStatus: StepRecord['status']): AgentRunState {
    return state([
      step(1, {
        tool: 'book_hotel',
        status: hotelStatus,
        startedAt: 10,
        endedAt: 20,
        attempts: 2,
        undo: 'cancel_hotel',
        observation: { status: 'ok', output: { bookingId: 'HT-1' } },
      }),
      step(2, { tool: 'pay', status: 'failed', startedAt: 21, endedAt: 22, observation: DECLINED, attempts: 1 }),
    ]);
  }

  test("prints a failed call's whole message and hint, wrapped to the width", () => {
    const lines = printedLines(
      [state([step(1, { tool: 'book_flight', status: 'failed', observation: INVALID, startedAt: 1, endedAt: 2 })])],
      60,
    );
    expect(lines[0]).toBe('  step 1  → book_flight {}');
    expect(lines[1]).toMatch(/^ {10}✗ INVALID_ARGUMENTS: /);
    expect(lines.every((line) => line.length <= 60)).toBe(true);
    expectWhole(lines.join('\n'), INVALID.message);
    expectWhole(lines.join('\n'), `Hint: ${LONG_HINT}`);
  });

  test('shows a call that succeeded after retries and was undone before the next read, then the failure, then the undo', () => {
    const lines = printedLines([
      state([step(1, { tool: 'book_hotel', status: 'running', startedAt: 10, undo: 'cancel_hotel' })]),
      bookedThenDeclined('compensating'),
      bookedThenDeclined('compensated'),
    ]);
    expect(lines).toEqual([
      '  step 1  → book_hotel {}',
      '          ✓ ok after 2 attempts: {"bookingId":"HT-1"}',
      '  step 2  → pay {}',
      '          ✗ PERMISSION_DENIED: The card was declined by the issuing bank for this amount.',
      '            Hint: Do not retry the payment; ask the user for another card.',
      '  undo 1  ↩ undoing with cancel_hotel...',
      '  undo 1  ↩ undone by cancel_hotel',
    ]);
  });

  test('puts the undo of every earlier step after the failure that caused it, newest first, when all arrive at once', () => {
    const ok = { status: 'ok' as const, output: 'ok' };
    const lines = printedLines([
      state([
        step(1, { status: 'compensated', startedAt: 1, endedAt: 2, observation: ok, undo: 'u1' }),
        step(2, { status: 'compensated', startedAt: 3, endedAt: 4, observation: ok, undo: 'u2' }),
        step(3, { status: 'failed', startedAt: 5, endedAt: 6, observation: DECLINED }),
      ]),
    ]);
    const failure = lines.findIndex((line) => line.includes('✗ PERMISSION_DENIED'));
    expect(lines.findIndex((line) => line.includes('undo 2'))).toBeGreaterThan(failure);
    expect(lines.findIndex((line) => line.includes('undo 1'))).toBeGreaterThan(
      lines.findIndex((line) => line.includes('undo 2')),
    );
  });

  test('names the step of an end line that does not follow its own start (parallel calls)', () => {
    const ok = { status: 'ok' as const, output: 'ok' };
    const lines = printedLines([
      state([
        step(1, { status: 'succeeded', startedAt: 1, endedAt: 5, observation: ok }),
        step(2, { status: 'succeeded', startedAt: 1, endedAt: 3, observation: ok }),
      ]),
    ]);
    expect(lines).toEqual(['  step 1  → tool {}', '  step 2  → tool {}', '          ✓ ok: ok', '  step 1  ✓ ok: ok']);
  });
});

describe('show and the summary', () => {
  test("the steps table is followed by each error's whole message and hint", () => {
    const text = stepsTable([step(1, { tool: 'pay', status: 'failed', attempts: 1, observation: DECLINED })], 50);
    expect(text).toMatch(/1\s+pay\s+\{\}\s+failed\s+1\s+PERMISSION_DENIED/);
    expectWhole(text, `✗ PERMISSION_DENIED: ${DECLINED.message}`);
    expectWhole(text, `Hint: ${DECLINED.hint}`);
  });

  test('the summary counts in the singular and the plural and shows the token usage', () => {
    const summary = summaryOf([step(1, {})], 1, { inputTokens: 1200, outputTokens: 300 });
    expect(summary).toContain('turns:   1 model turn, 1 tool call');
    expect(summary).toContain('tokens:  1200 in, 300 out');
  });

  test('a model that reports no usage is said so, not shown as zero tokens', () => {
    const summary = summaryOf([], 2, { unreportedTurns: 2 });
    expect(summary).toContain('turns:   2 model turns, 0 tool calls');
    expect(summary).toContain('tokens:  not reported by the model (2 turns)');
  });

  test('a run waiting for its model provider says so in show and in the progress line of run', () => {
    const waiting = state([], {
      waitingForModel: {
        provider: 'openai',
        model: 'gpt-test',
        since: Date.parse('2026-12-07T10:00:00.000Z'),
        attempts: 5,
        lastCode: 'MODEL_UNAVAILABLE',
        lastError: 'connect ECONNREFUSED',
      },
    });
    expect(runSummary(waiting, 200).join('\n')).toContain(
      'model:   waiting for model provider openai (gpt-test) since 2026-12-07T10:00:00.000Z (5 attempts; last: MODEL_UNAVAILABLE: connect ECONNREFUSED)',
    );
    expect(progressLine(waiting, 0, 1_000)).toBe(
      '… running · 0 turns · 0 tool calls · waiting for model provider openai (gpt-test) since 2026-12-07T10:00:00.000Z (5 attempts; last: MODEL_UNAVAILABLE: connect ECONNREFUSED) · 1.0 s',
    );
  });

  test('a step answered from the cache says so in show', () => {
    const cached = step(1, {
      status: 'succeeded',
      observation: { status: 'ok', output: { sky: 'clear' }, cached: true },
    });
    expect(stepsTable([cached])).toContain('ok (cached): {"sky":"clear"}');
  });

  test('the progress line says "1 tool call"', () => {
    expect(progressLine(state([step(1, {})], { turns: 1, stepCount: 1 }), 0, 1_000)).toBe(
      '… running · 1 turn · 1 tool call · 1.0 s',
    );
  });
});

describe('a dry run in show', () => {
  const NO_RECORD: ToolErrorObservation = {
    status: 'error',
    code: 'DRY_RUN_NO_RECORD',
    message: 'no recorded call had these arguments; nothing was run.',
    hint: 'This is a dry run.',
    retryable: false,
    attempts: 0,
  };
  const steps = [
    step(1, {
      status: 'succeeded',
      observation: { status: 'ok', output: {} },
      dryRun: { answer: 'recorded', sourceStep: 3 },
    }),
    step(2, { status: 'failed', observation: NO_RECORD, dryRun: { answer: 'refused' } }),
    step(3, { status: 'succeeded', observation: { status: 'ok', output: {} }, dryRun: { answer: 'ran' } }),
  ];

  test('marks how each step was answered', () => {
    const table = stepsTable(steps);
    expect(table).toContain('succeeded (record of step 3)');
    expect(table).toContain('failed (no record)');
    expect(table).toContain('succeeded (ran)');
  });

  test('says in the summary whose dry run it is and how its calls were answered', () => {
    const lines = runSummary(state(steps, { dryRun: { sourceWorkflowId: 'agent-run-1', readOnlyTools: 'run' } }));
    expectWhole(
      lines.join('\n'),
      'dry run: of agent-run-1: 1 answered from its record, 1 refused (no record), 1 read-only ran; nothing with effects ran',
    );
  });
});

describe('a forked run', () => {
  const source = { workflowId: 'run-a' };
  const forked = state(
    [
      step(1, { status: 'succeeded', forked: source }),
      step(2, { status: 'succeeded', forked: source }),
      step(3, { status: 'succeeded' }),
    ],
    { forkedFrom: { workflowId: 'run-a', fromStep: 3 } },
  );

  test('says what it was forked from and which steps it copied', () => {
    expectWhole(
      runSummary(forked).join('\n'),
      'forked: from run-a at step 3: steps 1–2 are copied from it (nothing ran for them here)',
    );
  });

  test('marks the copied steps in the steps table, and only those', () => {
    const rows = stepsTable(forked.steps).split('\n');
    expect(rows.find((row) => /^1\s/.test(row))).toContain('succeeded (copied)');
    expect(rows.find((row) => /^2\s/.test(row))).toContain('succeeded (copied)');
    expect(rows.find((row) => /^3\s/.test(row))).not.toContain('(copied)');
  });
});
