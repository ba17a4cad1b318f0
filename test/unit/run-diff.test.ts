/**
 * `diffRuns`: two runs' steps aligned by step id, what differs at each, and the first divergence (tool, then
 * arguments in their recorded form, then outcome; or a step only one run has). No server.
 */
import { diffRuns, type RunToDiff } from '../../src/client/run-diff';
import type { ToolErrorObservation } from '../../src/contract/activity-protocol';
import type { StepRecord } from '../../src/contract/agent-run-types';
import { REDACTED } from '../../src/contract/sensitive-arguments';
import { usageOfTurns } from '../support/run-usage';

const DECLINED: ToolErrorObservation = {
  status: 'error',
  code: 'PERMISSION_DENIED',
  message: 'The card was declined.',
  hint: 'Do not retry the payment.',
  retryable: false,
  attempts: 1,
};

/** A succeeded call of `tool` with `args` at `stepId`, proposed by turn `stepId`. */
function ok(stepId: number, tool: string, args: unknown, fields: Partial<StepRecord> = {}): StepRecord {
  return {
    stepId,
    turn: stepId,
    toolCallId: `call-${stepId}`,
    tool,
    arguments: args,
    idempotencyKey: `run/${stepId}`,
    status: 'succeeded',
    observation: { status: 'ok', output: { done: stepId } },
    ...fields,
  };
}

function run(workflowId: string, steps: StepRecord[], fields: Partial<RunToDiff> = {}): RunToDiff {
  return { workflowId, status: 'completed', steps, turns: steps.length, stepCount: steps.length, ...fields };
}

/** Three steps: search, book, charge 1000 cents. */
const BASE = [
  ok(1, 'search_flights', { from: 'LIS', to: 'BER' }),
  ok(2, 'book_flight', { flight: 'FR2381', passengers: 2 }),
  ok(3, 'charge_card', { amountCents: 1000 }),
];

/** BASE with step 2 replaced by `step`. */
function withStep2(step: StepRecord): StepRecord[] {
  return [BASE[0]!, step, BASE[2]!];
}

test('identical runs have no divergence and no difference at any step', () => {
  const diff = diffRuns(run('a', BASE), run('b', BASE));
  expect(diff.firstDivergence).toBeNull();
  expect(diff.divergenceReason).toBeNull();
  expect(diff.rows.map((row) => [row.stepId, row.differences])).toEqual([
    [1, []],
    [2, []],
    [3, []],
  ]);
});

test('a different tool at step 2 is the first divergence, named as the tool', () => {
  const diff = diffRuns(run('a', BASE), run('b', withStep2(ok(2, 'book_train', { train: 'ICE 1' }))));
  expect(diff.firstDivergence).toBe(2);
  expect(diff.divergenceReason).toBe('tool');
  expect(diff.rows[1]!.differences).toEqual(['tool', 'arguments']);
});

test('different arguments to the same tool are a divergence of the arguments', () => {
  const diff = diffRuns(run('a', BASE), run('b', withStep2(ok(2, 'book_flight', { flight: 'FR2381', passengers: 3 }))));
  expect(diff.firstDivergence).toBe(2);
  expect(diff.divergenceReason).toBe('arguments');
  expect(diff.rows[1]!.b?.arguments).toEqual({ flight: 'FR2381', passengers: 3 });
});

test('arguments with the same fields in another key order are the same arguments', () => {
  const diff = diffRuns(run('a', BASE), run('b', withStep2(ok(2, 'book_flight', { passengers: 2, flight: 'FR2381' }))));
  expect(diff.firstDivergence).toBeNull();
});

test('a call that failed where the other succeeded is a divergence of the outcome, with its error code', () => {
  const failed = ok(2, 'book_flight', { flight: 'FR2381', passengers: 2 }, { status: 'failed', observation: DECLINED });
  const diff = diffRuns(run('a', BASE), run('b', withStep2(failed)));
  expect(diff.firstDivergence).toBe(2);
  expect(diff.divergenceReason).toBe('outcome');
  expect(diff.rows[1]!.a).toMatchObject({ outcome: 'ok', status: 'succeeded' });
  expect(diff.rows[1]!.b).toMatchObject({ outcome: 'PERMISSION_DENIED', errorCode: 'PERMISSION_DENIED' });
});

test('a step undone later keeps the outcome of its call: compensated after ok is still ok', () => {
  const compensated = ok(2, 'book_flight', { flight: 'FR2381', passengers: 2 }, { status: 'compensated' });
  const diff = diffRuns(run('a', BASE), run('b', withStep2(compensated)));
  expect(diff.firstDivergence).toBeNull();
  expect(diff.rows[1]!.b?.status).toBe('compensated');
});

test('a longer run diverges at the first step the other run does not have', () => {
  const diff = diffRuns(run('a', BASE.slice(0, 2)), run('b', BASE));
  expect(diff.firstDivergence).toBe(3);
  expect(diff.divergenceReason).toBe('only-in-b');
  expect(diff.rows[2]).toMatchObject({ stepId: 3, a: null, differences: ['only-in-b'] });
  expect(diffRuns(run('a', BASE), run('b', BASE.slice(0, 1))).divergenceReason).toBe('only-in-a');
});

test('redacted arguments compare by their recorded form: the same but for a redacted secret is no divergence', () => {
  const card = (amountCents: number) => ok(2, 'pay', { card: REDACTED, amountCents });
  expect(diffRuns(run('a', withStep2(card(500))), run('b', withStep2(card(500)))).firstDivergence).toBeNull();
  expect(diffRuns(run('a', withStep2(card(500))), run('b', withStep2(card(700)))).divergenceReason).toBe('arguments');
});

test('each step carries the tokens and cost of the model turn that proposed it', () => {
  const usage = usageOfTurns([
    { turn: 1, inputTokens: 100, outputTokens: 20, cost: 0.001 },
    { turn: 2, inputTokens: 200, outputTokens: 40, cost: 0.002 },
  ]);
  // Steps 2 and 3 come from turn 2 (parallel calls of one turn).
  const steps = [BASE[0]!, BASE[1]!, { ...BASE[2]!, turn: 2 }];
  const diff = diffRuns(run('a', steps, { usage, turns: 2 }), run('b', steps));
  expect(diff.rows.map((row) => row.a?.turnUsage?.inputTokens)).toEqual([100, 200, 200]);
  expect(diff.rows[0]!.b?.turnUsage).toBeUndefined();
  expect(diff.a).toEqual({
    workflowId: 'a',
    status: 'completed',
    steps: 3,
    turns: 2,
    usage: { inputTokens: 300, outputTokens: 60, cost: 0.003, unreportedTurns: 0, unpricedTurns: 0 },
  });
});

test('a run whose model reported no token counts gives its steps no turn usage', () => {
  const usage = usageOfTurns(
    [1, 2, 3].map((turn) => ({ turn, inputTokens: 0, outputTokens: 0 })),
    3,
  );
  const diff = diffRuns(run('a', BASE, { usage }), run('b', BASE));
  expect(diff.rows.map((row) => row.a?.turnUsage)).toEqual([undefined, undefined, undefined]);
});

test('steps an earlier generation holds are not compared: the diff starts where both states have steps', () => {
  const later = run('b', BASE.slice(1), { generation: 1, stepCount: 3 });
  const diff = diffRuns(run('a', BASE), later);
  expect(diff.comparedFrom).toBe(2);
  expect(diff.rows.map((row) => row.stepId)).toEqual([2, 3]);
  expect(diff.firstDivergence).toBeNull();
});

test('a compensation a history records under its step id is not a step of its own', () => {
  const undo = ok(2, 'book_flight (undo of book_flight)', { originalKey: 'run/2' });
  const diff = diffRuns(run('a', BASE), run('b', [...BASE, undo], { fromHistory: true }));
  expect(diff.firstDivergence).toBeNull();
  expect(diff.rows[1]!.b?.tool).toBe('book_flight');
});
