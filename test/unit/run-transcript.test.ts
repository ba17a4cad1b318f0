import { RunTranscript } from '../../src/workflows/run-transcript';
import type { TranscriptMessage } from '../../src/contract/model-types';

const assistant: TranscriptMessage = { role: 'assistant', text: 'calling', toolCalls: [] };
const observation: TranscriptMessage = {
  role: 'tool',
  toolCallId: 'c1',
  name: 'add',
  stepId: 1,
  observation: { status: 'ok', output: 3 },
};

describe('the run transcript', () => {
  test('sends the goal first and then only what the store does not have', () => {
    const transcript = new RunTranscript({ goal: 'add numbers' });
    expect(transcript.delta()).toEqual({ fromIndex: 0, messages: [{ role: 'user', content: 'add numbers' }] });
    transcript.markStored();
    transcript.push(assistant);
    transcript.push(observation);
    expect(transcript.delta()).toEqual({ fromIndex: 1, messages: [assistant, observation] });
  });

  test('hands the next generation the messages the store has not received yet', () => {
    const first = new RunTranscript({ goal: 'g' });
    first.markStored();
    first.push(assistant);
    first.push(observation);
    const carried = first.carryOver();
    expect(carried).toEqual({ cursor: 1, unsent: [assistant, observation] });
    const next = new RunTranscript(carried);
    expect(next.delta()).toEqual({ fromIndex: 1, messages: [assistant, observation] });
    expect(next.length).toBe(3);
  });

  test('resends everything it holds when the store lost the transcript, noting a gap after continue-as-new', () => {
    const next = new RunTranscript({ cursor: 5, unsent: [assistant] });
    const resent = next.resend('g');
    expect(resent.fromIndex).toBe(0);
    expect(resent.messages[0]).toEqual({ role: 'user', content: 'g' });
    expect(resent.messages[1]).toEqual({
      role: 'user',
      content: '(4 earlier messages of this run are no longer available.)',
    });
    expect(resent.messages[2]).toEqual(assistant);
  });
});
