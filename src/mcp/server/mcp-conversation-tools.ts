import { createHash, randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { z } from 'zod';
import type { AgentDefinition } from '../../agents/define-agent';
import { getConversation, sendMessage, startConversation } from '../../client/conversation-client';
import { parseToolArguments } from '../../guard/parse-tool-arguments';
import type { AgentRunTool } from './mcp-agent-run-tools';
import { builtInToolListing } from './mcp-built-in-tool-listing';
import { callToolErrorOf, structuredResultOf } from './mcp-tool-call-result';

/** Workflow ids of conversations started through MCP (`start_conversation`) start with this. */
export const MCP_CONVERSATION_PREFIX = 'conversation-mcp-';

const startOutput = z.strictObject({
  conversationId: z.string().describe('Pass it to send_message.'),
});
const sendInput = z.strictObject({
  conversationId: z.string().min(1).describe('The conversationId start_conversation returned.'),
  text: z.string().min(1).describe("The user's message."),
});
const sendOutput = z.strictObject({
  seq: z.number().int().describe("The message's position in the conversation."),
  status: z.string().describe('answered, or failed (reason says why; the conversation ended).'),
  answer: z.string().optional(),
  output: z.unknown().optional().describe("The agent's typed answer, when it has an output schema."),
  reason: z.string().optional(),
});

/** Served settings of the conversation tools. */
interface Served {
  client: Client;
  taskQueue: string;
  /** The caller's scope (mcp-caller.ts): part of every conversation id it gets. */
  scope: string;
}

/**
 * `start_conversation` (`{ agent }`, one of the served agents: starts a conversation of the caller,
 * `conversation-mcp-<scope>-...`; with an idempotency key the id derives from it, so a repeated start answers the
 * same conversation) and `send_message` (`{ conversationId, text }`: the answered message; with an idempotency key
 * the message id derives from it, so a retried call is answered once). Only the caller that started a conversation
 * reaches it: any other id, existing or not, is answered with the same `NOT_FOUND`. Listed when agents are served.
 */
export function conversationTools(served: Served, agents: readonly AgentDefinition[]): Map<string, AgentRunTool> {
  if (agents.length === 0) return new Map();
  const byName = new Map(agents.map((agent) => [agent.name, agent]));
  const names = [...byName.keys()] as [string, ...string[]];
  const startInput = z.strictObject({ agent: z.enum(names).describe('The agent to talk with.') });
  const start: AgentRunTool = {
    listing: builtInToolListing(
      'start_conversation',
      'Starts a durable conversation with an agent (one workflow across messages) and returns its conversationId. ' +
        `Agents: ${names.join(', ')}. Then send each message with send_message.`,
      startInput,
      { readOnly: false, openWorld: true },
      startOutput,
    ),
    call: async (args, key) => {
      const parsed = parseToolArguments(startInput, args);
      if (!parsed.ok) return invalid(parsed.error.message, parsed.error.hint);
      const id = `${MCP_CONVERSATION_PREFIX}${served.scope}-${key === undefined ? randomUUID() : digest(key)}`;
      const handle = await startConversation(served.client, byName.get(parsed.value.agent)!, {
        id,
        taskQueue: served.taskQueue,
      });
      return structuredResultOf({ conversationId: handle.workflowId });
    },
  };
  const send: AgentRunTool = {
    listing: builtInToolListing(
      'send_message',
      "Sends one message to a conversation and answers with the agent's reply once its turn ended (messages sent " +
        'while a turn runs wait in order). Send an idempotency key to make a retried message safe.',
      sendInput,
      { readOnly: false, openWorld: true },
      sendOutput,
    ),
    call: (args, key) => sendToConversation(served, args, key),
  };
  return new Map([
    ['start_conversation', start],
    ['send_message', send],
  ]);
}

async function sendToConversation(
  served: Served,
  args: Record<string, unknown>,
  key: string | undefined,
): Promise<CallToolResult> {
  const parsed = parseToolArguments(sendInput, args);
  if (!parsed.ok) return invalid(parsed.error.message, parsed.error.hint);
  const { conversationId, text } = parsed.value;
  const notFound = () => callToolErrorOf(`NOT_FOUND: There is no conversation "${conversationId}".`);
  if (!conversationId.startsWith(`${MCP_CONVERSATION_PREFIX}${served.scope}-`)) return notFound();
  try {
    const reply = await sendMessage(getConversation(served.client, conversationId), text, {
      ...(key !== undefined ? { messageId: `mcp-${digest(key)}` } : {}),
    });
    const { seq, status, answer, output, reason } = reply;
    return structuredResultOf({
      seq,
      status,
      ...(answer !== undefined ? { answer } : {}),
      ...(output !== undefined ? { output } : {}),
      ...(reason !== undefined ? { reason } : {}),
    });
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return notFound();
    if (error instanceof WorkflowUpdateFailedError) {
      const cause = error.cause instanceof Error ? error.cause.message : error.message;
      return callToolErrorOf(`CONVERSATION_CLOSED: ${cause}`);
    }
    throw error;
  }
}

function digest(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 32);
}

function invalid(message: string, hint: string): CallToolResult {
  return callToolErrorOf(`INVALID_ARGUMENTS: ${message}\nHint: ${hint}`);
}
