import type { TranscriptMessage } from '../../src/contract/model-types';
import { HANDOFF_CONVERSATION_MAX_CHARS } from '../../src/contract/sub-agent-spec';
import { handoffConversation } from '../../src/workflows/handoff-conversation';

describe('the conversation a handoff passes on', () => {
  test('is one line per message: the user, the assistant with its calls, the tool observations', () => {
    const messages: TranscriptMessage[] = [
      { role: 'user', content: 'Where is INV-7?' },
      { role: 'assistant', text: 'Looking.', toolCalls: [{ id: 'c1', name: 'lookup', arguments: {} }] },
      {
        role: 'tool',
        toolCallId: 'c1',
        name: 'lookup',
        stepId: 1,
        observation: { status: 'ok', output: { paid: true } },
      },
    ];
    expect(handoffConversation(messages)).toBe(
      'User: Where is INV-7?\nAssistant: Looking. (calls lookup)\nTool [lookup → {"paid":true}]',
    );
  });

  test('keeps the goal and the newest messages within its budget, and says how many it left out', () => {
    const long = (n: number): TranscriptMessage => ({
      role: 'assistant',
      text: `${n} ${'x'.repeat(1_500)}`,
      toolCalls: [],
    });
    const messages: TranscriptMessage[] = [
      { role: 'user', content: 'The goal' },
      ...Array.from({ length: 40 }, (_, n) => long(n)),
    ];
    const text = handoffConversation(messages);
    expect(text.length).toBeLessThanOrEqual(HANDOFF_CONVERSATION_MAX_CHARS + 100);
    expect(text.startsWith('User: The goal\n(')).toBe(true);
    expect(text).toMatch(/\(\d+ earlier messages left out\)/);
    expect(text).toContain('Assistant: 39 ');
  });
});
