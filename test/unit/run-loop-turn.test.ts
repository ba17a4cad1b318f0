import type { AgentRunInput } from '../../src/contract/agent-run-types';
import type { ModelToolCall, ModelTurn } from '../../src/contract/model-types';
import { PAYLOAD_LIMITS } from '../../src/contract/payload-limits';
import { MAX_CONSECUTIVE_TURN_ISSUES } from '../../src/workflows/model-turn-issue';
import { initialRunUsage } from '../../src/workflows/run-usage';
import { readTurn, turnMessages } from '../../src/workflows/turn-reading';
import { judgeTurn, type TurnContext } from '../../src/workflows/turn-verdict';

const call = (id: number): ModelToolCall => ({ id: `call_${id}`, name: 'search', arguments: { q: `q${id}` } });
const calls = (count: number): ModelToolCall[] => Array.from({ length: count }, (_, i) => call(i + 1));
const turn = (fields: Partial<ModelTurn> = {}): ModelTurn => ({ toolCalls: [], done: false, ...fields });
const refused: ModelTurn['issue'] = { code: 'MODEL_REFUSED', message: 'I cannot help with that.' };

const context = (fields: Partial<TurnContext> = {}): TurnContext => ({
  input: { goal: 'Book a trip.', model: { provider: 'scripted' } } as AgentRunInput,
  limits: { maxSteps: 10, maxTurns: 10 },
  usage: initialRunUsage(),
  stepCount: 0,
  turnIssues: 0,
  ...fields,
});
const judge = (t: ModelTurn, fields: Partial<TurnContext> = {}) => judgeTurn(t, readTurn(t), context(fields));

describe("reading a model's turn", () => {
  test('a turn without a list of calls has no calls', () => {
    const reading = readTurn({ done: false, toolCalls: 'search' as unknown as ModelToolCall[] });

    expect(reading.calls).toEqual([]);
  });

  test('calls past the per-turn limit are dropped and counted with those the model activity dropped', () => {
    const reading = readTurn(turn({ toolCalls: calls(PAYLOAD_LIMITS.maxToolCallsPerTurn + 2), droppedToolCalls: 3 }));

    expect(reading.calls).toHaveLength(PAYLOAD_LIMITS.maxToolCallsPerTurn);
    expect(reading.dropped).toBe(5);
  });

  test("a turn's text is shortened to the turn's text budget", () => {
    const reading = readTurn(turn({ text: 'x'.repeat(PAYLOAD_LIMITS.modelTurnTextChars + 100) }));

    expect(reading.text!.length).toBeLessThanOrEqual(PAYLOAD_LIMITS.modelTurnTextChars);
  });

  test("the transcript keeps the assistant's message with its text and calls", () => {
    expect(turnMessages(readTurn(turn({ text: 'Searching.', toolCalls: calls(1) })))).toEqual([
      { role: 'assistant', text: 'Searching.', toolCalls: [call(1)] },
    ]);
  });

  test('the model is told how many calls of a turn that runs some were dropped', () => {
    const messages = turnMessages(readTurn(turn({ toolCalls: calls(1), droppedToolCalls: 2 })));

    expect(messages[1]).toEqual({
      role: 'user',
      content: `(You asked for 3 tool calls in one turn; at most ${PAYLOAD_LIMITS.maxToolCallsPerTurn} run per turn: the first 1 ran, the other 2 did not. Ask for the ones you still need in your next turns.)`,
    });
  });

  test('a turn whose calls were all dropped gets no note about them', () => {
    expect(turnMessages(readTurn(turn({ droppedToolCalls: 2 })))).toHaveLength(1);
  });
});

describe("the verdict on a model's turn", () => {
  test('a turn with calls within the limits runs them and ends a streak of unusable turns', () => {
    expect(judge(turn({ toolCalls: calls(2) }), { turnIssues: 1 })).toEqual({
      verdict: { kind: 'run-calls' },
      turnIssues: 0,
    });
  });

  test('a turn marked done is the answer, its text the answer', () => {
    expect(judge(turn({ done: true, text: 'Booked.' })).verdict).toEqual({ kind: 'answer', answer: 'Booked.' });
  });

  test('a turn without calls is the answer too, an empty one when it has no text', () => {
    expect(judge(turn()).verdict).toEqual({ kind: 'answer', answer: '' });
  });

  test('an unusable turn is an observation for the model, never an answer', () => {
    const judged = judge(turn({ issue: refused }));

    expect(judged.verdict).toEqual({ kind: 'retry', note: expect.stringContaining('MODEL_REFUSED') });
    expect(judged.turnIssues).toBe(1);
  });

  test('unusable turns in a row end the run', () => {
    const judged = judge(turn({ issue: refused }), { turnIssues: MAX_CONSECUTIVE_TURN_ISSUES - 1 });

    expect(judged.verdict).toEqual({
      kind: 'abort',
      abort: { status: 'failed', reason: expect.stringMatching(/unusable turns in a row/), compensate: true },
    });
  });

  test('an unusable turn that still has calls runs them', () => {
    expect(judge(turn({ issue: refused, toolCalls: calls(1) })).verdict).toEqual({ kind: 'run-calls' });
  });

  test('a turn whose calls would pass the tool-call limit ends the run', () => {
    const judged = judge(turn({ toolCalls: calls(3) }), { stepCount: 8 });

    expect(judged.verdict).toMatchObject({
      kind: 'abort',
      abort: { reason: 'The run reached its limit of 10 tool calls.' },
    });
  });

  test('the usage budget is judged before anything else', () => {
    const input = { goal: 'g', model: { provider: 'scripted' }, limits: { maxOutputTokens: 10 } } as AgentRunInput;
    const usage = { ...initialRunUsage(), outputTokens: 50 };

    const judged = judge(turn({ issue: refused }), { input, usage, turnIssues: 1 });

    expect(judged.verdict).toMatchObject({ kind: 'abort', abort: { reason: expect.stringMatching(/output tokens/) } });
  });
});
