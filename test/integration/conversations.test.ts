import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineAgent } from '../../src/agents/define-agent';
import {
  closeConversation,
  getConversationView,
  getMessages,
  sendMessage,
  startConversation,
} from '../../src/client/conversation-client';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import { Worker } from '@temporalio/worker';
import { fetchRunHistories } from '../../src/client/agent-run-client';
import { approveStep, getPendingApprovals } from '../../src/client/approval-client';
import { CONVERSATION_LEDGER_KINDS, conversationTools } from '../support/conversation-tools';
import { CONVERSATION_WORKER } from '../support/conversation-worker';
import { startLedgerServer, type LedgerServer } from '../support/ledger-server';
import { createTestWorker, testServer, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';
import { killProcess, spawnTestWorkerProcess } from '../support/worker-process';

/*
 * Conversations (docs/conversations.md) on the real dev server: one workflow across messages, its tool calls'
 * effects counted at the downstream (the test ledger, which does not deduplicate).
 */

const temporal = useTestTemporal();
let ledger: LedgerServer;
beforeAll(async () => {
  ledger = await startLedgerServer();
});
afterAll(() => ledger.close());

/** The scripted model of the booking conversation: turn N of the conversation plays `script[N]`. */
const bookingScript: ScriptedTurn[] = [
  { text: 'Hello! Where would you like to stay?', final: true },
  { toolCalls: [{ name: 'book_hotel', arguments: { city: 'Berlin', nights: 2 } }] },
  { text: 'Booked two nights in Berlin.', final: true },
  { toolCalls: [{ name: 'undo_step', arguments: { tool: 'book_hotel' } }] },
  { text: 'Your Berlin booking is cancelled.', final: true },
];

const concierge = defineAgent({
  name: 'concierge',
  instructions: 'You book hotels, and cancel them when asked.',
  model: { provider: 'scripted', script: bookingScript },
  tools: ['book_hotel'],
});

test('a booking of message 2 is undone in message 3, once, across a worker SIGKILL and a message sent twice', async () => {
  const taskQueue = uniqueTaskQueue('conversation-kill');
  const keysPath = join(mkdtempSync(join(tmpdir(), 'conversation-')), 'keys.sqlite');
  const settings = { ledgerUrl: ledger.url, keysPath, transcriptsPath: `${keysPath}.transcripts` };
  let worker: ChildProcess = await spawnTestWorkerProcess(CONVERSATION_WORKER, taskQueue, settings);
  try {
    const chat = await startConversation(temporal.client, concierge, { id: `chat-${taskQueue}`, taskQueue });
    expect((await sendMessage(chat, 'Hi!')).answer).toBe('Hello! Where would you like to stay?');
    expect((await sendMessage(chat, 'Two nights in Berlin, please.')).answer).toBe('Booked two nights in Berlin.');

    await killProcess(worker);
    worker = await spawnTestWorkerProcess(CONVERSATION_WORKER, taskQueue, settings);
    const cancel = { messageId: 'message-3' };
    const [first, again] = await Promise.all([
      sendMessage(chat, 'Cancel that booking.', cancel),
      sendMessage(chat, 'Cancel that booking.', cancel),
    ]);
    const late = await sendMessage(chat, 'Cancel that booking.', cancel);

    expect([first.answer, again.answer, late.answer]).toEqual(Array(3).fill('Your Berlin booking is cancelled.'));
    const { runKey } = await getConversationView(chat);
    const effects = ledger.effects.filter((effect) => effect.key.startsWith(`${runKey}/`));
    expect(effects.map((effect) => [effect.kind, effect.key])).toEqual([
      [CONVERSATION_LEDGER_KINDS.booking, `${runKey}/1`],
      [CONVERSATION_LEDGER_KINDS.cancellation, `${runKey}/1/undo`],
    ]);
    expect((await getMessages(chat)).map((m) => [m.seq, m.status, m.steps])).toEqual([
      [1, 'answered', []],
      [2, 'answered', [1]],
      [3, 'answered', [2]],
    ]);
    const closed = await closeConversation(chat);
    expect(closed.status).toBe('closed');
    expect(ledger.effects.filter((effect) => effect.key.startsWith(`${runKey}/`))).toHaveLength(2);
  } finally {
    await killProcess(worker);
  }
}, 600_000); // two worker starts on a loaded machine

test('a 300-message conversation continues as new and keeps every message, in order', async () => {
  const taskQueue = uniqueTaskQueue('conversation-long');
  const worker = await createTestWorker(temporal, { tools: [], taskQueue });
  const running = worker.run();
  try {
    const agent = defineAgent({
      name: 'notary',
      instructions: 'You acknowledge every message.',
      model: { provider: 'scripted', script: [{ text: 'Noted.' }], repeat: 1_000 },
      tools: [],
    });
    const chat = await startConversation(temporal.client, agent, {
      id: `chat-${taskQueue}`,
      taskQueue,
      continueAsNewAfterMessages: 100,
    });
    for (let i = 1; i <= 300; i++) {
      expect((await sendMessage(chat, `message ${i}`)).answer).toBe('Noted.');
    }

    const view = await getConversationView(chat);
    expect(view.generation).toBeGreaterThanOrEqual(2);
    expect(view.messages.map((m) => [m.seq, m.text, m.status])).toEqual(
      Array.from({ length: 300 }, (_, i) => [i + 1, `message ${i + 1}`, 'answered']),
    );
    const { historyLength } = await chat.describe();
    expect(historyLength).toBeLessThan(2_000);
  } finally {
    worker.shutdown();
    await running;
  }
}, 900_000);

/** Runs `body` with an in-process worker of the conversation tools (approval-gated bookings with `approval`). */
async function withWorker(
  name: string,
  options: { approval?: boolean },
  body: (taskQueue: string) => Promise<void>,
): Promise<void> {
  const taskQueue = uniqueTaskQueue(name);
  const tools = conversationTools(ledger.url, options);
  const worker = await createTestWorker(temporal, { tools, taskQueue });
  const running = worker.run();
  try {
    await body(taskQueue);
  } finally {
    worker.shutdown();
    await running;
  }
}

function scriptedAgent(script: ScriptedTurn[]) {
  return defineAgent({
    name: 'concierge',
    instructions: 'You book hotels.',
    model: { provider: 'scripted', script },
    tools: ['book_hotel'],
  });
}

test('messages sent while a turn waits for approval are queued, then answered in the order sent', async () => {
  await withWorker('conversation-queue', { approval: true }, async (taskQueue) => {
    const agent = scriptedAgent([
      { toolCalls: [{ name: 'book_hotel', arguments: { city: 'Lisbon', nights: 1 } }] },
      { text: 'Booked Lisbon.', final: true },
      { text: 'Second answer.', final: true },
      { text: 'Third answer.', final: true },
    ]);
    const chat = await startConversation(temporal.client, agent, { id: `chat-${taskQueue}`, taskQueue });
    const first = sendMessage(chat, 'Book Lisbon.');
    const waiting = await waitFor('the booking to wait', async () =>
      (await getPendingApprovals(temporal.client, chat.workflowId)).find((call) => call.tool === 'book_hotel'),
    );
    const second = sendMessage(chat, 'Second.');
    await waitFor('message 2 to be queued', async () => (await getMessages(chat)).length === 2);
    const third = sendMessage(chat, 'Third.');
    await waitFor('message 3 to be queued', async () => (await getMessages(chat)).length === 3);
    expect((await getMessages(chat)).map((m) => m.status)).toEqual(['running', 'queued', 'queued']);

    await approveStep(temporal.client, chat.workflowId, {
      stepId: waiting.stepId,
      digest: waiting.digest,
      approver: 'alice',
    });

    const replies = await Promise.all([first, second, third]);
    expect(replies.map((r) => [r.seq, r.answer])).toEqual([
      [1, 'Booked Lisbon.'],
      [2, 'Second answer.'],
      [3, 'Third answer.'],
    ]);
  });
}, 300_000);

test('a message sent again after the conversation continued as new gets its first answer, once', async () => {
  await withWorker('conversation-resend', {}, async (taskQueue) => {
    const agent = scriptedAgent([{ text: 'First answer.' }, { text: 'Another answer.' }]);
    const chat = await startConversation(temporal.client, agent, {
      id: `chat-${taskQueue}`,
      taskQueue,
      continueAsNewAfterMessages: 1,
    });
    const first = await sendMessage(chat, 'Hello.', { messageId: 'hello-1' });
    await waitFor('the conversation to continue as new', async () => (await getConversationView(chat)).generation >= 1);

    const again = await sendMessage(chat, 'Hello.', { messageId: 'hello-1' });

    expect(again).toEqual(first);
    expect((await getMessages(chat)).map((m) => m.messageId)).toEqual(['hello-1']);
  });
}, 300_000);

test('a conversation closes after its idle timeout, its effects standing, and refuses later messages', async () => {
  await withWorker('conversation-idle', {}, async (taskQueue) => {
    const agent = scriptedAgent([
      { toolCalls: [{ name: 'book_hotel', arguments: { city: 'Porto', nights: 1 } }] },
      { text: 'Booked Porto.', final: true },
    ]);
    const chat = await startConversation(temporal.client, agent, {
      id: `chat-${taskQueue}`,
      taskQueue,
      idleTimeoutMs: 1_000,
    });
    await sendMessage(chat, 'Book Porto.');

    const ended = await chat.result();

    expect(ended.status).toBe('closed');
    expect(ended.reason).toMatch(/No message came for 1000 ms/);
    expect(ledger.effects.filter((e) => e.key.startsWith(`${ended.runKey}/`)).map((e) => e.kind)).toEqual([
      CONVERSATION_LEDGER_KINDS.booking,
    ]);
    await expect(sendMessage(chat, 'Anyone?')).rejects.toThrow();
  });
}, 300_000);

test('a conversation cancelled between messages undoes the bookings it still owes', async () => {
  await withWorker('conversation-cancel', {}, async (taskQueue) => {
    const agent = scriptedAgent([
      { toolCalls: [{ name: 'book_hotel', arguments: { city: 'Madrid', nights: 3 } }] },
      { text: 'Booked Madrid.', final: true },
    ]);
    const chat = await startConversation(temporal.client, agent, { id: `chat-${taskQueue}`, taskQueue });
    await sendMessage(chat, 'Book Madrid.');
    const { runKey } = await getConversationView(chat);

    await chat.cancel();

    await expect(chat.result()).rejects.toThrow();
    expect(ledger.effects.filter((e) => e.key.startsWith(`${runKey}/`)).map((e) => [e.kind, e.key])).toEqual([
      [CONVERSATION_LEDGER_KINDS.booking, `${runKey}/1`],
      [CONVERSATION_LEDGER_KINDS.cancellation, `${runKey}/1/undo`],
    ]);
  });
}, 300_000);

test("a conversation's histories replay on the current workflow code, across continue-as-new", async () => {
  await withWorker('conversation-replay', {}, async (taskQueue) => {
    const agent = scriptedAgent(bookingScript);
    const chat = await startConversation(temporal.client, agent, {
      id: `chat-${taskQueue}`,
      taskQueue,
      continueAsNewAfterMessages: 2,
    });
    for (const text of ['Hi!', 'Two nights in Berlin, please.', 'Cancel that booking.']) await sendMessage(chat, text);
    const { runKey } = await closeConversation(chat);

    const firstRunId = runKey.slice(chat.workflowId.length + 1);
    const histories = await fetchRunHistories(temporal.client, chat.workflowId, firstRunId);
    expect(histories).toHaveLength(2);
    for (const history of histories) {
      await Worker.runReplayHistory({ workflowBundle: { codePath: testServer().bundlePath } }, history);
    }
  });
}, 300_000);

test('a message whose turn fails ends the conversation and undoes what earlier messages booked', async () => {
  await withWorker('conversation-saga', {}, async (taskQueue) => {
    const agent = defineAgent({
      name: 'concierge',
      instructions: 'You book hotels.',
      model: {
        provider: 'scripted',
        script: [
          { toolCalls: [{ name: 'book_hotel', arguments: { city: 'Rome', nights: 2 } }] },
          { text: 'Booked Rome.', final: true },
          { toolCalls: [{ name: 'book_hotel', arguments: { city: 'Rome', nights: -1 } }] },
          { text: 'Never said.', final: true },
        ],
      },
      tools: ['book_hotel'],
      failurePolicy: { criticalTools: ['book_hotel'] },
    });
    const chat = await startConversation(temporal.client, agent, { id: `chat-${taskQueue}`, taskQueue });
    await sendMessage(chat, 'Book Rome.');

    const failed = await sendMessage(chat, 'Book Rome for minus one night.');
    const ended = await chat.result();

    expect(failed).toMatchObject({ seq: 2, status: 'failed' });
    expect(ended.status).toBe('compensated');
    expect(ledger.effects.filter((e) => e.key.startsWith(`${ended.runKey}/`)).map((e) => [e.kind, e.key])).toEqual([
      [CONVERSATION_LEDGER_KINDS.booking, `${ended.runKey}/1`],
      [CONVERSATION_LEDGER_KINDS.cancellation, `${ended.runKey}/1/undo`],
    ]);
  });
}, 300_000);

test('messages sent while the conversation continues as new are all answered, none lost at the boundary', async () => {
  await withWorker('conversation-boundary', {}, async (taskQueue) => {
    const agent = defineAgent({
      name: 'notary',
      instructions: 'You acknowledge every message.',
      model: { provider: 'scripted', script: [{ text: 'Noted.' }], repeat: 100 },
      tools: [],
    });
    const chat = await startConversation(temporal.client, agent, {
      id: `chat-${taskQueue}`,
      taskQueue,
      continueAsNewAfterMessages: 2,
    });
    const sent: Promise<unknown>[] = [];
    for (let i = 1; i <= 12; i++) {
      sent.push(sendMessage(chat, `message ${i}`, { messageId: `m-${i}` }));
      await new Promise((resolve) => setTimeout(resolve, 30 * (i % 3)));
    }
    await Promise.all(sent);

    const view = await getConversationView(chat);
    expect(view.generation).toBeGreaterThanOrEqual(1);
    expect(view.messages.map((m) => m.status)).toEqual(Array(12).fill('answered'));
    expect(new Set(view.messages.map((m) => m.messageId)).size).toBe(12);
  });
}, 300_000);
