import { defineAgent } from '../../src/agents/define-agent';
import { getConversation, getMessages } from '../../src/client/conversation-client';
import { useMcpTestListener } from '../support/mcp-test-listener';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';

/*
 * The MCP server's conversation tool pair (docs/conversations.md, "Over MCP") on the real dev server: a caller
 * starts a conversation with a served agent and talks to it; a retried message is answered once; another caller
 * cannot reach the conversation.
 */

const taskQueue = uniqueTaskQueue('conversations-mcp');
const notary = defineAgent({
  name: 'notary',
  instructions: 'You acknowledge every message.',
  model: { provider: 'scripted', script: [{ text: 'Noted.' }], repeat: 100 },
  tools: [],
});
const temporal = useTestTemporal({
  worker: (connected) => createTestWorker(connected, { tools: [], taskQueue }),
});
const mcp = useMcpTestListener(temporal, {
  taskQueue,
  catalog: () => [],
  tokens: [
    { name: 'alice', token: 'alice-token' },
    { name: 'mallory', token: 'mallory-token' },
  ],
  agents: [notary],
});

test('a caller talks with a served agent over MCP; a message retried with its key is accepted once', async () => {
  const alice = await mcp.connect('alice-token');
  const started = await alice.callTool({ name: 'start_conversation', arguments: { agent: 'notary' } });
  const { conversationId } = started.structuredContent as { conversationId: string };
  const send = (text: string, key: string) =>
    alice.callTool({ name: 'send_message', arguments: { conversationId, text }, _meta: { idempotencyKey: key } });

  const first = await send('First.', 'message-1');
  const retried = await send('First.', 'message-1');
  const second = await send('Second.', 'message-2');

  expect(first.structuredContent).toEqual({ seq: 1, status: 'answered', answer: 'Noted.' });
  expect(retried.structuredContent).toEqual(first.structuredContent);
  expect(second.structuredContent).toMatchObject({ seq: 2, status: 'answered' });
  const messages = await getMessages(getConversation(temporal.client, conversationId));
  expect(messages.map((m) => m.text)).toEqual(['First.', 'Second.']);
});

test("another caller's message to a conversation is answered NOT_FOUND, as for an id that does not exist", async () => {
  const alice = await mcp.connect('alice-token');
  const started = await alice.callTool({ name: 'start_conversation', arguments: { agent: 'notary' } });
  const { conversationId } = started.structuredContent as { conversationId: string };
  const mallory = await mcp.connect('mallory-token');

  const theirs = await mallory.callTool({ name: 'send_message', arguments: { conversationId, text: 'Hi.' } });
  const made = await mallory.callTool({
    name: 'send_message',
    arguments: { conversationId: `${conversationId}x`, text: 'Hi.' },
  });

  expect(theirs.isError).toBe(true);
  expect(theirs.content).toEqual([{ type: 'text', text: `NOT_FOUND: There is no conversation "${conversationId}".` }]);
  expect(made.content).toEqual([{ type: 'text', text: `NOT_FOUND: There is no conversation "${conversationId}x".` }]);
  expect(await getMessages(getConversation(temporal.client, conversationId))).toEqual([]);
});
