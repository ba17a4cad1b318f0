/**
 * What `durable-tools diff` prints: a header line per run, each step one line per run with the first
 * divergence marked `>`, turn tokens on a turn's first call, and the summary line.
 */
import { diffRuns, type RunToDiff } from '../../src/client/run-diff';
import { diffText, divergenceLine, runHeaderLine } from '../../src/cli/diff-view';
import type { StepRecord } from '../../src/contract/agent-run-types';
import { usageOfTurns } from '../support/run-usage';

function charge(stepId: number, amountCents: number): StepRecord {
  return {
    stepId,
    turn: stepId,
    toolCallId: `call-${stepId}`,
    tool: stepId === 1 ? 'create_order' : 'charge_card',
    arguments: stepId === 1 ? { item: 'book', quantity: 1 } : { amountCents },
    idempotencyKey: `run/${stepId}`,
    status: 'succeeded',
    observation: { status: 'ok', output: {} },
  };
}

function run(workflowId: string, amountCents: number): RunToDiff {
  return {
    workflowId,
    status: 'completed',
    steps: [charge(1, 0), charge(2, amountCents)],
    turns: 3,
    stepCount: 2,
    usage: usageOfTurns([
      { turn: 1, inputTokens: 100, outputTokens: 15, cost: 0.0007 },
      { turn: 2, inputTokens: 110, outputTokens: 15, cost: 0.0014 },
    ]),
  };
}

test('the summary line names the first divergence and why, or says there is none', () => {
  expect(divergenceLine(diffRuns(run('a', 1000), run('b', 2500)))).toBe('first divergence: step 2 (arguments differ)');
  expect(divergenceLine(diffRuns(run('a', 1000), run('b', 1000)))).toBe('no divergence');
});

test('a run with a step the other does not have is named in the summary line', () => {
  const shorter = { ...run('a', 1000), steps: [charge(1, 0)] };
  expect(divergenceLine(diffRuns(shorter, run('b', 1000)))).toBe('first divergence: step 2 (only in run-b)');
});

test('the header line of a run says status, tool calls, model turns, tokens and cost', () => {
  expect(runHeaderLine('run-a', diffRuns(run('order-a', 1000), run('order-b', 1000)).a)).toBe(
    'run-a  order-a  completed · 2 tool calls · 3 model turns · tokens 210 in, 30 out, cost 0.0021',
  );
});

test('the table shows each run on its own line under the step id and marks only the first divergent step', () => {
  const lines = diffText(diffRuns(run('order-a', 1000), run('order-b', 2500))).split('\n');
  const stepLines = lines.filter((line) => /^[> ]\s+(\d+\s+)?[ab]\s/.test(line));
  expect(stepLines).toHaveLength(4);
  expect(stepLines[0]).toMatch(
    /^ {3}1\s+a\s+create_order\s+\{"item":"book","quantity":1\}\s+succeeded\s+ok\s+1\s+100 in, 15 out\s+0\.0007$/,
  );
  expect(stepLines[2]).toMatch(/^>\s+2\s+a\s+charge_card\s+\{"amountCents":1000\}/);
  expect(stepLines[3]).toMatch(/^>\s+b\s+charge_card\s+\{"amountCents":2500\}/);
  expect(lines.filter((line) => line.startsWith('>'))).toHaveLength(2);
  expect(lines.at(-1)).toBe('first divergence: step 2 (arguments differ)');
});

test("a turn's tokens and cost are shown on its first call only: the calls of one turn share them", () => {
  const oneTurn = { ...run('order-a', 1000), steps: [charge(1, 0), { ...charge(2, 1000), turn: 1 }] };
  const lines = diffText(diffRuns(oneTurn, oneTurn)).split('\n');
  expect(lines.filter((line) => line.includes('100 in, 15 out'))).toEqual([
    expect.stringMatching(/^ {3}1\s+a\s+create_order/),
    expect.stringMatching(/^\s+b\s+create_order/),
  ]);
});
