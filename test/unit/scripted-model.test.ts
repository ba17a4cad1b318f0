import { scriptedModel } from '../../src/model/scripted-model';
import type { ModelRequest, TranscriptMessage } from '../../src/contract/model-types';

const script = [
  { text: 'first', toolCalls: [{ name: 'add', arguments: '{"a":1,"b":2}' }] },
  {
    text: 'second',
    toolCalls: [{ name: 'add', arguments: '{"a":3,"b":4}' }],
    ifPreviousFailed: { text: 'retrying', toolCalls: [{ name: 'add', arguments: '{"a":1,"b":2}' }] },
  },
  { text: 'done', final: true },
];

function request(transcript: TranscriptMessage[]): ModelRequest {
  return {
    goal: 'g',
    turn: transcript.filter((m) => m.role === 'assistant').length,
    transcript,
    tools: [],
    settings: { provider: 'scripted', script },
  };
}

describe('the scripted model', () => {
  test('plays the turn whose index is the number of assistant turns so far', async () => {
    const turn = await scriptedModel(request([{ role: 'user', content: 'g' }]));
    expect(turn).toEqual({
      text: 'first',
      toolCalls: [{ id: 'call_1_1', name: 'add', arguments: '{"a":1,"b":2}' }],
      done: false,
    });
  });

  test('takes the alternative turn when an observation of the previous turn was an error', async () => {
    const turn = await scriptedModel(
      request([
        { role: 'user', content: 'g' },
        { role: 'assistant', toolCalls: [] },
        {
          role: 'tool',
          toolCallId: 'call_1_1',
          name: 'add',
          stepId: 1,
          observation: { status: 'error', code: 'INTERNAL', message: 'm', hint: 'h', retryable: false, attempts: 1 },
        },
      ]),
    );
    expect(turn.text).toBe('retrying');
  });

  test('finishes with the final turn and no tool calls', async () => {
    const transcript: TranscriptMessage[] = [
      { role: 'user', content: 'g' },
      { role: 'assistant', toolCalls: [] },
      { role: 'assistant', toolCalls: [] },
    ];
    expect(await scriptedModel(request(transcript))).toEqual({ text: 'done', toolCalls: [], done: true });
  });

  test('finishes when the script is exhausted', async () => {
    const transcript: TranscriptMessage[] = Array.from({ length: 5 }, () => ({ role: 'assistant', toolCalls: [] }));
    expect((await scriptedModel(request(transcript))).done).toBe(true);
  });
});
