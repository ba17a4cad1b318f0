import type { AgentRunCarryOver, AgentRunInput, RunStatus } from './agent-run-types';
import type { ToolCatalogEntry } from './tool-catalog-entry';

/**
 * What a conversation's agent takes: an agent run's settings without the goal (each message is one) and without
 * what only the engine sets (carry-over, sub-agent link, fork, dry run, the fast path).
 */
export type ConversationAgentSettings = Omit<
  AgentRunInput,
  'goal' | 'carriedOver' | 'subAgent' | 'fork' | 'dryRun' | 'fastPath' | 'continueAsNewAfterSteps'
>;

/** Input of the `conversation` workflow (start it with `startConversation`). */
export interface ConversationInput {
  /** The agent that answers every message: model, tools, limits, policies. */
  agent: ConversationAgentSettings;
  /** The conversation closes after this long without a message (default 24 hours). */
  idleTimeoutMs?: number;
  /** Continue as new after this many messages in one generation (default: when Temporal suggests it). */
  continueAsNewAfterMessages?: number;
  /** Set by the workflow itself when it continues as new; never by clients. */
  carriedOver?: ConversationCarryOver;
}

/** Where a message stands: waiting for its turn, being answered, answered, or not answered (the turn failed). */
export type ConversationMessageStatus = 'queued' | 'running' | 'answered' | 'failed';

/** One message of a conversation and its answer. */
export interface ConversationMessage {
  /** Position in the conversation, from 1. */
  seq: number;
  /** The client's id of the message: a message sent again with the same id is accepted once. */
  messageId: string;
  text: string;
  status: ConversationMessageStatus;
  /** The agent's answer, once answered. */
  answer?: string;
  /** The typed answer, when the agent has an `output` schema (docs/agents.md, "Typed answers"). */
  output?: unknown;
  /** Why the message got no answer (the turn failed or the conversation ended first). */
  reason?: string;
  /** The tool calls the message's turn made: their step numbers (keys `${runKey}/${step}`). */
  steps?: number[];
}

/** What `sendMessage` takes. */
export interface SendMessageInput {
  text: string;
  /** The message's id (also the update's id): a retry with the same id gets the first answer. */
  messageId: string;
}

/** What `sendMessage` returns: the message as it ended (answered, or failed with a reason). */
export type ConversationReply = ConversationMessage;

/** How a conversation stands or ended. */
export type ConversationStatus = 'open' | 'closing' | 'closed' | Exclude<RunStatus, 'running' | 'completed'>;

/** The `getConversation` query's answer and the workflow's result. */
export interface ConversationView {
  workflowId: string;
  /** The conversation's key (`${workflowId}/${firstExecutionRunId}`): every tool call's key starts with it. */
  runKey: string;
  status: ConversationStatus;
  /** Why it closed (idle timeout, a close request) or failed. */
  reason?: string;
  /** Continue-as-new generations so far. */
  generation: number;
  /** Tool calls made so far. */
  stepCount: number;
  /** Every message, oldest first. */
  messages: ConversationMessage[];
}

/** What one generation of a conversation hands the next. */
export interface ConversationCarryOver {
  generation: number;
  /** The agent's carried state (step counter, compensations owed, transcript cursor, usage). */
  run: AgentRunCarryOver;
  messages: ConversationMessage[];
}

/** The name of the conversation's built-in tool that undoes an earlier step (conversation-undo.ts). */
export const UNDO_STEP_TOOL = 'undo_step';

/**
 * The catalog entry of {@link UNDO_STEP_TOOL}, shown to a conversation's model: it runs the undo tool of an earlier
 * call still owed an undo (a booking of an earlier message), under that call's compensation key.
 */
export const UNDO_STEP_ENTRY: ToolCatalogEntry = {
  name: UNDO_STEP_TOOL,
  description:
    'Undoes an earlier call of this conversation that can be undone (for example cancels a booking made in an ' +
    "earlier message): runs that tool's undo. Name the tool whose newest call to undo, or the step number.",
  inputSchema: {
    type: 'object',
    properties: {
      tool: { type: 'string', description: 'The tool whose newest call is undone.' },
      step: { type: 'integer', minimum: 1, description: 'The step to undo (instead of the newest call of tool).' },
    },
    additionalProperties: false,
  },
  outputSchema: { type: 'object' },
  effect: 'irreversible',
  idempotent: true,
  approval: 'never',
  // Runs in the workflow as compensations run: these say how an undo is retried there (saga.ts), not an activity.
  retry: { maximumAttempts: 1, initialDelayMs: 1_000, maxDelayMs: 1_000, jitter: 'full', totalDeadlineMs: 60_000 },
  timeoutMs: 60_000,
};
