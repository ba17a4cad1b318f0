import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { defineAgent } from '../../src/agents/define-agent';
import { closeConversation, sendMessage, startConversation } from '../../src/client/conversation-client';
import { GEN_AI_ATTRIBUTES as GEN_AI } from '../../src/contract/gen-ai-conventions';
import { inMemoryTracing } from '../support/in-memory-telemetry';
import { lookupRateTool as lookupRate } from '../support/test-tools';
import { uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { createTracedWorker } from '../support/traced-worker';

/**
 * Issue 50: a traced conversation (docs/conversations.md) — each message is one agent invocation, an
 * `invoke_agent concierge` span carrying the conversation's id as `gen_ai.conversation.id`.
 */

const concierge = defineAgent({
  name: 'concierge',
  instructions: 'You quote hotel rates.',
  model: {
    provider: 'scripted',
    script: [
      { text: 'Hello!', final: true },
      { toolCalls: [{ name: 'lookup_rate', arguments: { city: 'Berlin' } }] },
      { text: '120 a night.', final: true },
    ],
  },
  tools: ['lookup_rate'],
});

const temporal = useTestTemporal();
const tracing = inMemoryTracing();
let conversationId: string;

beforeAll(async () => {
  const taskQueue = uniqueTaskQueue('conversation-tracing');
  conversationId = `chat-${taskQueue}`;
  const worker = await createTracedWorker(temporal, tracing, { tools: [lookupRate], taskQueue });
  await worker.runUntil(async () => {
    const chat = await startConversation(temporal.client, concierge, { id: conversationId, taskQueue });
    await sendMessage(chat, 'Hi!');
    await sendMessage(chat, 'What does Berlin cost?');
    await closeConversation(chat);
  });
});

const invocations = (): ReadableSpan[] => tracing.spans().filter((span) => span.name === 'invoke_agent concierge');

test("each message of a conversation is an invoke_agent span named after the conversation's agent", () => {
  expect(invocations()).toHaveLength(2);
});

test("each invocation carries the conversation's id as gen_ai.conversation.id", () => {
  for (const span of invocations()) expect(span.attributes[GEN_AI.conversationId]).toBe(conversationId);
});

test("the invocations are children of the conversation's workflow span", () => {
  const [conversation] = tracing.spans().filter((span) => span.name === 'RunWorkflow:agentConversation');
  for (const span of invocations()) expect(span.parentSpanId).toBe(conversation?.spanContext().spanId);
});

test("a message's tool call is an execute_tool span of that message's invocation", () => {
  const [call] = tracing.spans().filter((span) => span.name === 'execute_tool lookup_rate');
  const second = invocations().find((span) => span.spanContext().spanId === call?.parentSpanId);
  expect(second).toBeDefined();
});
