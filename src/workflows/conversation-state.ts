import { condition, setHandler, workflowInfo } from '@temporalio/workflow';
import type { AgentRunCarryOver } from '../contract/agent-run-types';
import { closeConversationUpdate, getConversationQuery, sendMessageUpdate } from '../contract/conversation-messages';
import type {
  ConversationInput,
  ConversationMessage,
  ConversationView,
  SendMessageInput,
} from '../contract/conversation-types';
import type { RunLoop } from './run-types';

/** Longest message a conversation takes, in characters. */
export const MAX_MESSAGE_CHARS = 32_000;

/** Longest message id, in characters (it is also the update's id). */
const MAX_MESSAGE_ID_CHARS = 200;

/** A conversation's state in the workflow: what the query shows, the queue of messages and the agent's carry-over. */
export interface Conversation {
  input: ConversationInput;
  view: ConversationView;
  /** Messages by id: a message id seen before gets that message's answer (across continue-as-new too). */
  byId: Map<string, ConversationMessage>;
  /** Messages waiting for their turn, in the order they were accepted. */
  queue: ConversationMessage[];
  /** The agent's state after the last turn: step counter, compensations owed, transcript cursor. */
  run: AgentRunCarryOver;
  /** The last turn's loop: its catalog and scope run the compensations of a conversation cancelled while idle. */
  lastLoop?: RunLoop;
  messagesThisGeneration: number;
  /** JSON bytes of transcript this generation added. */
  transcriptBytes: number;
}

/** Where a new conversation's agent starts: no step, no turn, nothing owed, an empty transcript. */
function newAgentCarryOver(): AgentRunCarryOver {
  return {
    generation: 0,
    stepCount: 0,
    turns: 0,
    consecutiveToolErrors: 0,
    compensations: [],
    transcriptCursor: 0,
    unsentMessages: [],
    irreversibleDone: false,
    runScopedKeys: true,
  };
}

/** Opens this generation of the conversation: its state (from the carry-over) and its update and query handlers. */
export function openConversation(input: ConversationInput): Conversation {
  const { workflowId, firstExecutionRunId } = workflowInfo();
  const carried = input.carriedOver;
  const messages = carried?.messages ?? [];
  const talk: Conversation = {
    input,
    view: {
      workflowId,
      runKey: `${workflowId}/${firstExecutionRunId}`,
      status: 'open',
      generation: carried?.generation ?? 0,
      stepCount: carried?.run.stepCount ?? 0,
      messages,
    },
    byId: new Map(messages.map((message) => [message.messageId, message])),
    queue: [],
    run: carried?.run ?? newAgentCarryOver(),
    messagesThisGeneration: 0,
    transcriptBytes: 0,
  };
  installHandlers(talk);
  return talk;
}

function installHandlers(talk: Conversation): void {
  setHandler(sendMessageUpdate, (message) => acceptMessage(talk, message), {
    validator: (message) => validateMessage(talk, message),
  });
  setHandler(closeConversationUpdate, () => {
    if (talk.view.status === 'open') talk.view.status = 'closing';
    return talk.view;
  });
  setHandler(getConversationQuery, () => talk.view);
}

/**
 * Refuses, before it enters the history, a message that is not one (text, id) or that comes after the conversation
 * closed; a message id seen before always passes (its sender gets the first answer).
 */
function validateMessage(talk: Conversation, message: SendMessageInput): void {
  const { text, messageId } = (message ?? {}) as Partial<SendMessageInput>;
  if (typeof messageId !== 'string' || messageId === '' || messageId.length > MAX_MESSAGE_ID_CHARS) {
    throw new Error(`A message needs a messageId: a string of 1 to ${MAX_MESSAGE_ID_CHARS} characters.`);
  }
  if (talk.byId.has(messageId)) return;
  if (typeof text !== 'string' || text.trim() === '') throw new Error('A message needs a non-empty text.');
  if (text.length > MAX_MESSAGE_CHARS) {
    throw new Error(`The message has ${text.length} characters; a conversation takes at most ${MAX_MESSAGE_CHARS}.`);
  }
  if (talk.view.status !== 'open') {
    throw new Error(`The conversation ${talk.view.workflowId} is ${talk.view.status}: it takes no more messages.`);
  }
}

/** Queues a new message (a known id is not queued again) and returns it once answered or failed. */
async function acceptMessage(talk: Conversation, input: SendMessageInput): Promise<ConversationMessage> {
  let message = talk.byId.get(input.messageId);
  if (!message) {
    message = { seq: talk.view.messages.length + 1, messageId: input.messageId, text: input.text, status: 'queued' };
    talk.view.messages.push(message);
    talk.byId.set(message.messageId, message);
    talk.queue.push(message);
  }
  const settled = message;
  await condition(() => settled.status === 'answered' || settled.status === 'failed');
  return settled;
}

/** Fails every message still queued: the conversation ended before their turn. */
export function failQueued(talk: Conversation, reason: string): void {
  for (const message of talk.queue.splice(0)) {
    message.status = 'failed';
    message.reason = reason;
  }
}
