import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { agentRunInputOf, type AgentDefinition } from '../agents/define-agent';
import { closeConversationUpdate, getConversationQuery, sendMessageUpdate } from '../contract/conversation-messages';
import type {
  ConversationAgentSettings,
  ConversationInput,
  ConversationMessage,
  ConversationReply,
  ConversationView,
} from '../contract/conversation-types';
import type { AgentStreamEvent } from '../stores/streams/stream-events';
import type { StreamStore } from '../stores/streams/stream-store';
import type { agentConversation } from '../workflows/conversation';
import { retryTransientReads } from './transient-read-retry';
import { connectionSettingsFromEnv } from './connection-settings';

/** The workflow type of a conversation. */
export const CONVERSATION_WORKFLOW = 'agentConversation';

/** A conversation's handle: the workflow's, for `sendMessage`, `getMessages` and `closeConversation`. */
export type ConversationHandle = WorkflowHandle<typeof agentConversation>;

/** Options of {@link startConversation}. */
export interface StartConversationOptions {
  /** The conversation's workflow id. Starting an id that is open returns that conversation's handle. */
  id: string;
  /** Task queue of the workers (default: the environment's, `DURABLE_TOOLS_TASK_QUEUE`). */
  taskQueue?: string;
  /** Close after this long without a message (default 24 hours). */
  idleTimeoutMs?: number;
  /** Continue as new after this many messages in one generation (default: when Temporal suggests it). */
  continueAsNewAfterMessages?: number;
}

/**
 * Starts a conversation with an agent (docs/conversations.md): one workflow that answers messages one after
 * another, with the agent's model, tools, limits and policies. An id whose conversation is open gives its handle.
 *
 * @example
 * ```ts
 * const chat = await startConversation(client, concierge, { id: 'chat-42' });
 * const reply = await sendMessage(chat, 'Book me a hotel in Berlin for Friday.');
 * console.log(reply.answer);
 * ```
 */
export async function startConversation(
  client: Client,
  agent: AgentDefinition | ConversationAgentSettings,
  options: StartConversationOptions,
): Promise<ConversationHandle> {
  const settings = agentSettingsOf(agent);
  const input: ConversationInput = {
    agent: settings,
    ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
    ...(options.continueAsNewAfterMessages !== undefined
      ? { continueAsNewAfterMessages: options.continueAsNewAfterMessages }
      : {}),
  };
  const name = 'kind' in agent ? agent.name : 'agent';
  return await client.workflow.start<typeof agentConversation>(CONVERSATION_WORKFLOW, {
    taskQueue: options.taskQueue ?? connectionSettingsFromEnv().taskQueue,
    workflowId: options.id,
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [input],
    staticSummary: `Conversation with ${name}`.slice(0, 200),
  });
}

/** The agent's run settings a conversation takes (a defined agent's, or the settings as given). */
function agentSettingsOf(agent: AgentDefinition | ConversationAgentSettings): ConversationAgentSettings {
  if (!('kind' in agent)) return agent;
  const { goal: _goal, ...settings } = agentRunInputOf(agent, '');
  return settings;
}

/** The handle of the conversation with this id (the latest run of its chain). */
export function getConversation(client: Client, id: string): ConversationHandle {
  return client.workflow.getHandle<typeof agentConversation>(id);
}

/** Options of {@link sendMessage}. */
export interface SendMessageOptions {
  /** The message's id (default: a new UUID). Send a message again with the same id: it is answered once. */
  messageId?: string;
  /** Follow the answer as it is written: the stream store the workers publish to, and what to do with each event. */
  stream?: { store: StreamStore; onEvent(event: AgentStreamEvent): void };
}

/** How often a message is sent again when the run it reached continued as new before accepting it. */
const SEND_ATTEMPTS = 5;

/**
 * Sends one message and returns it answered (`status: 'answered'`, `answer`) or failed (`reason`), a Temporal
 * update whose id is the message id: sent again with the same id (a retry after a lost connection), the message
 * is accepted once and the first answer returned. Messages sent while a turn runs wait in order.
 */
export async function sendMessage(
  handle: ConversationHandle,
  text: string,
  options: SendMessageOptions = {},
): Promise<ConversationReply> {
  const messageId = options.messageId ?? randomUUID();
  const follow = options.stream ? await followStream(handle, options.stream) : undefined;
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        return await handle.executeUpdate(sendMessageUpdate, { args: [{ text, messageId }], updateId: messageId });
      } catch (error) {
        // The run took the update but continued as new before accepting it: the id now names the next run.
        if (attempt >= SEND_ATTEMPTS || !(error instanceof WorkflowNotFoundError)) throw error;
      }
    }
  } finally {
    await follow?.stop();
  }
}

/** Delivers the conversation's stream events written from now on until stopped (then the rest already written). */
async function followStream(
  handle: ConversationHandle,
  { store, onEvent }: NonNullable<SendMessageOptions['stream']>,
): Promise<{ stop(): Promise<void> }> {
  const stream = (await getConversationView(handle)).runKey;
  let next = (await store.head(stream)) + 1;
  const abort = new AbortController();
  const drain = async (): Promise<void> => {
    for (const event of await store.read(stream, next, 500)) {
      onEvent(event);
      next = event.offset + 1;
    }
  };
  const loop = (async () => {
    while (!abort.signal.aborted) {
      await store.waitFor(stream, next, { signal: abort.signal, timeoutMs: 1_000 });
      await drain();
    }
  })();
  return {
    stop: async () => {
      abort.abort();
      await loop.catch(() => undefined);
      await drain();
    },
  };
}

/** The conversation as it stands: status and every message with its answer. */
export async function getConversationView(handle: ConversationHandle): Promise<ConversationView> {
  return await handle.query(getConversationQuery);
}

/** Every message of the conversation with its answer, oldest first (across continue-as-new). */
export async function getMessages(handle: ConversationHandle): Promise<ConversationMessage[]> {
  return (await getConversationView(handle)).messages;
}

/**
 * Closes the conversation: messages already queued are answered first, later ones refused; its effects stand.
 * Returns the conversation's final state once the workflow has ended.
 */
export async function closeConversation(handle: ConversationHandle): Promise<ConversationView> {
  await handle.executeUpdate(closeConversationUpdate);
  return await retryTransientReads(() => handle.result());
}
