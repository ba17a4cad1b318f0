import type { Interface } from 'node:readline/promises';
import type { Client } from '@temporalio/client';
import { approveStep, getPendingApprovals, rejectStep, type PendingApproval } from '../client/approval-client';
import { sendMessage, type ConversationHandle } from '../client/conversation-client';
import type { ConversationReply } from '../contract/conversation-types';
import type { AgentStreamEvent } from '../stores/streams/stream-events';
import type { StreamStore } from '../stores/streams/stream-store';

/** How often the chat looks for a call of the current message waiting for approval, in ms. */
const APPROVAL_POLL_MS = 300;

/** What one chat session works with. */
export interface ChatSession {
  client: Client;
  handle: ConversationHandle;
  prompt: Interface;
  /** Where the answer is written (stdout). */
  write(text: string): void;
  /** The stream store the workers write to; without one, each answer is printed once complete. */
  streams?: StreamStore;
  /** Who approves inline. */
  approver: string;
}

/**
 * Sends one message and shows its answer: streamed as the model writes it (when the workers stream), with each
 * tool call named as it starts and each call waiting for approval asked inline (`y` approves, anything else
 * rejects). Returns the reply.
 */
export async function chatTurn(session: ChatSession, text: string): Promise<ConversationReply> {
  let streamed = false;
  const onEvent = (event: AgentStreamEvent): void => {
    if (event.type === 'text-delta') {
      if (!streamed) session.write('agent> ');
      streamed = true;
      session.write(event.delta);
    } else if (event.type === 'tool-call-start') {
      session.write(`${streamed ? '\n' : ''}  [calling ${event.toolName}]\n`);
      streamed = false;
    }
  };
  const stopApprovals = watchApprovals(session);
  try {
    const reply = await sendMessage(session.handle, text, {
      ...(session.streams ? { stream: { store: session.streams, onEvent } } : {}),
    });
    if (!streamed && reply.answer !== undefined) session.write(`agent> ${reply.answer}`);
    session.write('\n');
    if (reply.status === 'failed') session.write(`(no answer: ${reply.reason ?? 'the turn failed'})\n`);
    return reply;
  } finally {
    await stopApprovals();
  }
}

/** Asks, one at a time, about every call of the conversation that waits for approval, until stopped. */
function watchApprovals(session: ChatSession): () => Promise<void> {
  let stopped = false;
  const asked = new Set<string>();
  const loop = (async () => {
    while (!stopped) {
      const pending = await getPendingApprovals(session.client, session.handle.workflowId).catch(() => []);
      for (const call of pending) {
        const id = `${call.stepId}/${call.digest}`;
        if (stopped || asked.has(id)) continue;
        asked.add(id);
        await askApproval(session, call);
      }
      await new Promise((resolve) => setTimeout(resolve, APPROVAL_POLL_MS));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

async function askApproval(session: ChatSession, call: PendingApproval): Promise<void> {
  session.write(`\n  approval needed: step ${call.stepId} ${call.tool} ${JSON.stringify(call.arguments)}\n`);
  const answer = (await session.prompt.question(`  approve ${call.tool}? [y/N] `)).trim();
  const decision = { stepId: call.stepId, digest: call.digest, approver: session.approver };
  if (/^y(es)?$/i.test(answer)) {
    await approveStep(session.client, session.handle.workflowId, decision);
    session.write(`  approved step ${call.stepId}\n`);
  } else {
    await rejectStep(session.client, session.handle.workflowId, { ...decision, reason: 'Rejected in the chat.' });
    session.write(`  rejected step ${call.stepId}\n`);
  }
}
