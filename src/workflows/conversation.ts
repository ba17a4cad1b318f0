import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  workflowInfo,
} from '@temporalio/workflow';
import type { AgentRunResult } from '../contract/agent-run-types';
import type { ConversationInput, ConversationMessage, ConversationView } from '../contract/conversation-types';
import { PAYLOAD_LIMITS } from '../contract/payload-limits';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { ENGINE_ACTIVITY_OPTIONS } from './agent-run-defaults';
import { failQueued, openConversation, type Conversation } from './conversation-state';
import { playTurn } from './conversation-turn';
import { compensate } from './saga';

/** How long a conversation waits for a message before it closes, by default: 24 hours. */
export const CONVERSATION_IDLE_TIMEOUT_MS = 24 * 60 * 60 * 1000;

const { describeTools } = proxyActivities<{ describeTools(): Promise<ToolCatalogEntry[]> }>({
  ...ENGINE_ACTIVITY_OPTIONS.describeTools,
  summary: 'tool catalog',
});

/**
 * A conversation (docs/conversations.md): one workflow that answers the user's messages one after another.
 *
 * - Each message is a `sendMessage` update, queued in the order accepted and answered by one turn of the agent
 *   loop over the conversation's transcript (conversation-turn.ts); the update returns the answer. A message id
 *   seen before is not queued again: its sender gets the first answer, across continue-as-new too.
 * - Tool calls keep their keys, approvals and compensations across messages; a turn that fails ends the
 *   conversation as an agent run ends (its compensations, older messages' included, run newest first).
 * - Between messages it continues as new when Temporal suggests it (or every `continueAsNewAfterMessages`),
 *   once every update handler has finished, carrying the agent's state and the messages.
 * - It closes on `closeConversation` (queued messages are answered first) or after `idleTimeoutMs` without a
 *   message; the effects of a closed conversation stand. Cancelled, it runs the compensations owed.
 */
export async function agentConversation(input: ConversationInput): Promise<ConversationView> {
  const talk = openConversation(input);
  try {
    for (;;) {
      const next = await nextMessage(talk);
      if (typeof next === 'string') return await endConversation(talk, 'closed', next);
      const ended = await answer(talk, next);
      if (ended) return ended;
      if (continueAsNewDue(talk)) await continueWhenDrained(talk);
    }
  } catch (error) {
    if (isCancellation(error)) await cancelConversation(talk);
    throw error;
  }
}

/** The next queued message, or why the conversation closes (a close request, or no message for too long). */
async function nextMessage(talk: Conversation): Promise<ConversationMessage | string> {
  const idleMs = talk.input.idleTimeoutMs ?? CONVERSATION_IDLE_TIMEOUT_MS;
  const woke = await condition(() => talk.queue.length > 0 || talk.view.status === 'closing', idleMs);
  const message = talk.queue.shift();
  if (message) return message;
  return woke ? 'The conversation was closed.' : `No message came for ${idleMs} ms: the conversation closed.`;
}

/** Answers one message; returns the conversation's end when its turn ended it (failed, compensated). */
async function answer(talk: Conversation, message: ConversationMessage): Promise<ConversationView | undefined> {
  message.status = 'running';
  const result: AgentRunResult = await playTurn(talk, message);
  message.steps = result.steps.map((step) => step.stepId);
  talk.messagesThisGeneration += 1;
  if (result.status === 'completed') {
    message.status = 'answered';
    message.answer = result.answer ?? '';
    if (result.output !== undefined) message.output = result.output;
    setCurrentDetails(`Answered message ${message.seq}; ${talk.queue.length} queued.`);
    return undefined;
  }
  message.status = 'failed';
  message.reason = result.reason ?? `The turn ended ${result.status}.`;
  const status = result.status === 'running' ? 'failed' : result.status;
  return await endConversation(talk, status, `Message ${message.seq}: ${message.reason}`);
}

/** Ends the conversation: later messages are refused, queued ones fail, and every handler finishes first. */
async function endConversation(
  talk: Conversation,
  status: ConversationView['status'],
  reason: string,
): Promise<ConversationView> {
  talk.view.status = status;
  talk.view.reason = reason;
  failQueued(talk, `The conversation ended before this message's turn: ${reason}`);
  await condition(allHandlersFinished);
  return talk.view;
}

function continueAsNewDue(talk: Conversation): boolean {
  if (talk.view.status !== 'open' || talk.queue.length > 0) return false;
  const every = talk.input.continueAsNewAfterMessages;
  return (
    workflowInfo().continueAsNewSuggested ||
    (every !== undefined && talk.messagesThisGeneration >= every) ||
    talk.transcriptBytes > PAYLOAD_LIMITS.generationTranscriptBytes
  );
}

/**
 * Continues as new once no update handler runs (an answered message's sender has its answer; no message is lost
 * at the boundary). A message that comes in meanwhile is answered first: the caller's loop takes it.
 */
async function continueWhenDrained(talk: Conversation): Promise<void> {
  await condition(() => allHandlersFinished() || talk.queue.length > 0 || talk.view.status !== 'open');
  if (talk.queue.length > 0 || talk.view.status !== 'open') return;
  await continueAsNew<typeof agentConversation>({
    ...talk.input,
    carriedOver: { generation: talk.view.generation + 1, run: talk.run, messages: talk.view.messages },
  });
}

/**
 * The conversation was cancelled: a turn that was running ran what was owed itself (conversation-turn.ts); one
 * cancelled between messages runs the compensations still owed here, newest first, in a non-cancellable scope.
 */
async function cancelConversation(talk: Conversation): Promise<void> {
  const owed = talk.run.compensations;
  talk.view.status = 'cancelled';
  talk.view.reason = 'The conversation was cancelled.';
  failQueued(talk, talk.view.reason);
  if (owed.length === 0) return;
  await CancellationScope.nonCancellable(async () => {
    const catalog = talk.lastLoop?.step.catalog ?? new Map((await describeTools()).map((e) => [e.name, e]));
    const scope = { keyPrefix: talk.view.runKey, runKey: talk.view.runKey };
    const outcome = await compensate(owed, catalog, scope, new Map(), talk.input.agent.compensation ?? {});
    talk.run = { ...talk.run, compensations: [] };
    if (outcome.failedStep !== undefined) {
      talk.view.status = 'compensation_failed';
      talk.view.reason = `${talk.view.reason} Compensation of step ${outcome.failedStep} failed: ${outcome.error}`;
    }
  });
}
