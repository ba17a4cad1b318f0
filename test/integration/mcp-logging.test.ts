/**
 * MCP's `logging` utility on our server: the capability, `logging/setLevel` per session, and the
 * `notifications/message` the server sends about a call, driven by SDK clients over Streamable HTTP (one listener with
 * two callers' tokens, a worker of the recording tools in this process).
 */
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import {
  EmptyResultSchema,
  ErrorCode,
  LoggingMessageNotificationSchema,
  McpError,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { MCP_LOGGER } from '../../src/mcp/server/mcp-logging';
import { mcpCallWorkflowId } from '../../src/mcp/server/mcp-server';
import { TransientToolError } from '../../src/failures/tool-errors';
import { defineTool } from '../../src/tools/define-tool';
import { createToolRegistry } from '../../src/tools/tool-registry';
import { useMcpTestListener } from '../support/mcp-test-listener';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { createRecordingTools } from '../support/test-tools';
import { waitFor } from '../support/wait-for';

const ALICE = { subject: 'token:alice' };
const BOB = { subject: 'token:bob' };
const TOKENS = [
  { name: 'alice', token: 'alice-secret' },
  { name: 'bob', token: 'bob-secret' },
];

type LogParams = LoggingMessageNotification['params'];

const temporal = useTestTemporal({
  worker: (temporal) => createTestWorker(temporal, { tools: registry.list(), taskQueue }),
});
const taskQueue = uniqueTaskQueue('mcp-logging');
const recording = createRecordingTools();
/** Opened by a test to let the second attempt of `flaky_once` finish. */
let releaseSecondAttempt: () => void = () => {};
const flakyOnce = defineTool({
  name: 'flaky_once',
  description: 'Fails its first attempt transiently; the second reports progress and waits until the test lets it end.',
  input: z.object({ label: z.string() }),
  output: z.object({ label: z.string() }),
  effect: 'irreversible',
  idempotent: true,
  approval: 'never',
}).implement(async ({ label }, ctx) => {
  if (ctx.attempt === 1) throw new TransientToolError('The service is restarting.', { code: 'UNAVAILABLE' });
  ctx.progress(50, 'half way');
  await new Promise<void>((resolve) => (releaseSecondAttempt = resolve));
  return { label };
});
const registry = createToolRegistry([...recording.tools, flakyOnce]);
const mcp = useMcpTestListener(temporal, { taskQueue, catalog: () => registry.catalog(), tokens: TOKENS });

/** A client of `token` and every log message its session receives. */
async function connect(token = 'alice-secret'): Promise<{ client: McpClient; messages: LogParams[] }> {
  const messages: LogParams[] = [];
  const client = await mcp.connect(token, (client) =>
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      messages.push(notification.params);
    }),
  );
  return { client, messages };
}

const unique = (label: string) => `${label}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;

/** The data of a message (every message of ours is an object with `event` and `workflowId`). */
const dataOf = (message: LogParams) => message.data as { event?: string; workflowId?: string; [k: string]: unknown };

/** The messages about the call of `workflowId`. */
const about = (messages: LogParams[], workflowId: string) =>
  messages.filter((m) => dataOf(m).workflowId === workflowId);

/** Calls `add` with a key (so the test knows its workflow id); `a` a string makes it fail with INVALID_ARGUMENTS. */
async function add(client: McpClient, key: string, a: number | string = 1): Promise<void> {
  await client.callTool({ name: 'add', arguments: { a, b: 2 }, _meta: { idempotencyKey: key } });
}

describe('the logging capability of our MCP server', () => {
  test('the server declares the logging capability at initialize', async () => {
    const { client } = await connect();
    expect(client.getServerCapabilities()?.logging).toEqual({});
  });

  test('logging/setLevel is answered with an empty result', async () => {
    const { client } = await connect();
    await expect(client.setLoggingLevel('info')).resolves.toEqual({});
  });

  test('at level info a call sends info messages about it (started with its workflow id, finished) and no debug ones', async () => {
    const { client, messages } = await connect();
    await client.setLoggingLevel('info');
    const key = unique('info');
    const workflowId = mcpCallWorkflowId(key, { caller: ALICE });
    await add(client, key);
    await waitFor('the call to be reported finished', () =>
      about(messages, workflowId).some((m) => dataOf(m).event === 'call.finished'),
    );
    const mine = about(messages, workflowId);
    expect(mine.map((m) => [m.level, dataOf(m).event])).toEqual([
      ['info', 'call.started'],
      ['info', 'call.finished'],
    ]);
    expect(mine.every((m) => m.logger === MCP_LOGGER)).toBe(true);
    expect(dataOf(mine[1]!)).toMatchObject({ tool: 'add', attempts: 1 });
  });

  test('a session that never set a level gets every message, debug included', async () => {
    const { client, messages } = await connect();
    const key = unique('default');
    const workflowId = mcpCallWorkflowId(key, { caller: ALICE });
    await add(client, key);
    await waitFor('the call to be reported finished', () =>
      about(messages, workflowId).some((m) => dataOf(m).event === 'call.finished'),
    );
    expect(about(messages, workflowId).map((m) => [m.level, dataOf(m).event])).toEqual([
      ['info', 'call.started'],
      ['debug', 'call.waiting'],
      ['info', 'call.finished'],
    ]);
  });

  test('at level error a successful call sends nothing, and a failed call only its error with the code', async () => {
    const { client, messages } = await connect();
    await client.setLoggingLevel('error');
    const succeeding = unique('quiet');
    const failing = unique('loud');
    const failingId = mcpCallWorkflowId(failing, { caller: ALICE });
    await add(client, succeeding);
    await add(client, failing, 'one');
    await waitFor('the failed call to be reported', () => about(messages, failingId).length > 0);
    expect(about(messages, mcpCallWorkflowId(succeeding, { caller: ALICE }))).toEqual([]);
    expect(about(messages, failingId)).toEqual([
      expect.objectContaining({
        level: 'error',
        data: expect.objectContaining({ event: 'call.failed', code: 'INVALID_ARGUMENTS', tool: 'add' }),
      }),
    ]);
  });

  test('an invalid level is refused with InvalidParams, and the session goes on answering', async () => {
    const { client } = await connect();
    const refusal = await client
      .request({ method: 'logging/setLevel', params: { level: 'loud' } }, EmptyResultSchema)
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refusal).toBeInstanceOf(McpError);
    expect((refusal as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((refusal as McpError).message).toContain('loud');
    await expect(client.setLoggingLevel('warning')).resolves.toEqual({});
  });

  test("two callers' sessions on the same server keep their own levels", async () => {
    const alice = await connect('alice-secret');
    const bob = await connect('bob-secret');
    await alice.client.setLoggingLevel('error');
    await bob.client.setLoggingLevel('debug');
    const aliceKey = unique('alice');
    const bobKey = unique('bob');
    const bobsCall = mcpCallWorkflowId(bobKey, { caller: BOB });
    await add(alice.client, aliceKey);
    await add(bob.client, bobKey);
    await waitFor("bob's call to be reported finished", () =>
      about(bob.messages, bobsCall).some((m) => dataOf(m).event === 'call.finished'),
    );
    expect(about(bob.messages, bobsCall).map((m) => m.level)).toContain('debug');
    expect(about(alice.messages, mcpCallWorkflowId(aliceKey, { caller: ALICE }))).toEqual([]);
    expect(alice.messages.some((m) => dataOf(m).workflowId === bobsCall)).toBe(false);
  });

  test("a retried attempt is a warning with its error code, and the tool's progress is info", async () => {
    const { client, messages } = await connect();
    await client.setLoggingLevel('info');
    const key = unique('retry');
    const workflowId = mcpCallWorkflowId(key, { caller: ALICE });
    const result = client.callTool({ name: 'flaky_once', arguments: { label: key }, _meta: { idempotencyKey: key } });
    await waitFor('the retry and the progress to be reported', () => {
      const events = about(messages, workflowId).map((m) => dataOf(m).event);
      return events.includes('call.retrying') && events.includes('call.progress');
    });
    releaseSecondAttempt();
    expect((await result).isError).toBeFalsy();
    const mine = about(messages, workflowId);
    expect(mine.find((m) => dataOf(m).event === 'call.retrying')).toMatchObject({
      level: 'warning',
      data: { tool: 'flaky_once', attempt: 1, code: 'UNAVAILABLE' },
    });
    expect(mine.find((m) => dataOf(m).event === 'call.progress')).toMatchObject({
      level: 'info',
      data: { percent: 50, progressMessage: 'half way' },
    });
    expect(JSON.stringify(mine)).not.toContain(key);
  });
});
