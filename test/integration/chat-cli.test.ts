import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStreamStore } from '../../src/stores/streams/sqlite-stream-store';
import { REPO_ROOT } from '../support/cli-process';
import { testServerCliEnv } from '../support/cli-in-process';
import { CONVERSATION_LEDGER_KINDS, conversationTools } from '../support/conversation-tools';
import { startLedgerServer, type LedgerServer } from '../support/ledger-server';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { startTmuxSession } from '../support/tmux-session';

/*
 * `durable-tools chat` as a person uses it, at a terminal (tmux): type a message, read the answer as it streams,
 * approve the booking inline, close. The worker streams to a SQLite stream store the command reads.
 */

const dir = mkdtempSync(join(tmpdir(), 'chat-cli-'));
const taskQueue = uniqueTaskQueue('chat-cli');
const streamsPath = join(dir, 'streams.sqlite');
let ledger: LedgerServer;
useTestTemporal({
  worker: async (temporal) => {
    ledger = await startLedgerServer();
    return await createTestWorker(temporal, {
      tools: conversationTools(ledger.url, { approval: true }),
      taskQueue,
      streams: new SqliteStreamStore({ path: streamsPath }),
    });
  },
});
afterAll(() => ledger.close());

const AGENT_MODULE = `
import { defineAgent } from ${JSON.stringify(join(REPO_ROOT, 'src', 'agents', 'define-agent'))};
export const agent = defineAgent({
  name: 'concierge',
  instructions: 'You book hotels.',
  model: {
    provider: 'scripted',
    script: [
      { text: 'Let me book that.', toolCalls: [{ name: 'book_hotel', arguments: { city: 'Berlin', nights: 2 } }] },
      { text: 'Booked two nights in Berlin.', final: true },
    ],
  },
  tools: ['book_hotel'],
});
`;

test('chat under tmux: a typed message is answered as it streams, its booking approved inline', async () => {
  const modulePath = join(dir, 'concierge.ts');
  writeFileSync(modulePath, AGENT_MODULE);
  const id = `chat-${taskQueue}`;
  const env = {
    ...testServerCliEnv(dir),
    DURABLE_TOOLS_STREAM_SQLITE_PATH: streamsPath,
    USER: 'alice',
  };
  const command = `${process.execPath} --import tsx src/cli/main.ts chat ${modulePath} --id ${id} --task-queue ${taskQueue}`;
  const session = startTmuxSession(`dt-${taskQueue}`, command, REPO_ROOT, env);
  try {
    await session.waitForScreen(/you> $/m);
    session.type('Two nights in Berlin, please.');
    await session.waitForScreen(/approve book_hotel\? \[y\/N\]/);
    expect(ledger.effects).toHaveLength(0);
    session.type('y');

    const screen = await session.waitForScreen(/agent> Booked two nights in Berlin\.\n.*you> /s);
    expect(screen).toContain('agent> Let me book that.');
    expect(screen).toContain('[calling book_hotel]');
    expect(screen).toContain('approved step 1');
    expect(ledger.effects.map((effect) => effect.kind)).toEqual([CONVERSATION_LEDGER_KINDS.booking]);
    session.type('/close');
    await session.waitForScreen(new RegExp(`Conversation ${id} closed after 1 messages\\.`));
  } finally {
    session.kill();
  }
}, 300_000);
