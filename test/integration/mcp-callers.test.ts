/**
 * Isolation of MCP callers on the real server: idempotency keys from every place a client puts them, and two callers
 * with their own tokens who never see each other's calls, tasks, runs or keys. One listener with two named tokens, a
 * worker of the recording tools in this process, SDK clients over Streamable HTTP (and one over stdio).
 */
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { WorkflowNotFoundError } from '@temporalio/client';
import { MCP_IDEMPOTENCY_KEY_META } from '../../src/mcp/client/mcp-client-pool';
import { startMcpHttpListener } from '../../src/mcp/server/mcp-http-listener';
import { createDurableMcpServer, mcpCallWorkflowId } from '../../src/mcp/server/mcp-server';
import { createToolRegistry } from '../../src/tools/tool-registry';
import { useMcpTestListener } from '../support/mcp-test-listener';
import { expectTasksListedToTheirCallersOnly } from '../support/mcp-task-isolation';
import { createTestWorker, testServer, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { createRecordingTools, createWaitForCancelTool } from '../support/test-tools';
import { waitFor } from '../support/wait-for';
import { isStepKeyOf } from '../support/run-key';

const ALICE = { subject: 'token:alice' };
const BOB = { subject: 'token:bob' };
const TOKENS = [
  { name: 'alice', token: 'alice-secret' },
  { name: 'bob', token: 'bob-secret' },
];

const temporal = useTestTemporal({
  worker: (temporal) => createTestWorker(temporal, { tools: registry.list(), taskQueue }),
});
const taskQueue = uniqueTaskQueue('mcp-callers');
const recording = createRecordingTools();
const waitForCancel = createWaitForCancelTool();
const registry = createToolRegistry([...recording.tools, waitForCancel]);
const mcp = useMcpTestListener(temporal, { taskQueue, catalog: () => registry.catalog(), tokens: TOKENS });
const connect = (token: string): Promise<McpClient> => mcp.connect(token);

/** Calls of `create_order` the tools really made under the workflow of `key` for `caller`. */
function effectsOf(key: string, caller = ALICE): number {
  const workflowId = mcpCallWorkflowId(key, { caller });
  return recording.calls.filter((c) => isStepKeyOf(workflowId, 1, c.idempotencyKey)).length;
}

/** The error an MCP request ended with, with `id` written as ID (to compare a stranger's answer with an unknown's). */
async function refusalOf(request: Promise<unknown>, id: string): Promise<string> {
  const error = await request.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  return (error as McpError).message.replaceAll(id, 'ID');
}

const unique = (label: string) => `${label}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;

describe('idempotency keys of MCP clients', () => {
  test('a key in _meta.idempotencyKey makes a repeated call run once and return the first result', async () => {
    const alice = await connect('alice-secret');
    const key = unique('meta');
    const call = () =>
      alice.callTool({
        name: 'create_order',
        arguments: { item: 'book', quantity: 1 },
        _meta: { idempotencyKey: key },
      });
    const first = await call();
    const second = await call();
    expect(first.isError).toBeFalsy();
    expect(second.structuredContent).toEqual(first.structuredContent);
    expect(effectsOf(key)).toBe(1);
  });

  test("a key in SEP-3182's params.idempotencyKey makes a repeated call run once", async () => {
    const alice = await connect('alice-secret');
    const key = unique('sep');
    const call = () =>
      alice.request(
        {
          method: 'tools/call',
          params: { name: 'create_order', arguments: { item: 'pen', quantity: 2 }, idempotencyKey: key },
        },
        CallToolResultSchema,
      );
    const first = await call();
    const second = await call();
    expect(first.isError).toBeFalsy();
    expect(second.structuredContent).toEqual(first.structuredContent);
    expect(effectsOf(key)).toBe(1);
  });

  test('the same key sent in any of the three places reaches the same call', async () => {
    const alice = await connect('alice-secret');
    const key = unique('places');
    const args = { item: 'lamp', quantity: 1 };
    await alice.callTool({ name: 'create_order', arguments: args, _meta: { [MCP_IDEMPOTENCY_KEY_META]: key } });
    await alice.callTool({ name: 'create_order', arguments: args, _meta: { idempotencyKey: key } });
    await alice.request(
      { method: 'tools/call', params: { name: 'create_order', arguments: args, idempotencyKey: key } },
      CallToolResultSchema,
    );
    expect(effectsOf(key)).toBe(1);
  });

  test('two different keys in one call are refused with InvalidParams and nothing is started', async () => {
    const alice = await connect('alice-secret');
    const [a, b] = [unique('a'), unique('b')];
    const refused = await alice
      .request(
        {
          method: 'tools/call',
          params: {
            name: 'create_order',
            arguments: { item: 'x', quantity: 1 },
            idempotencyKey: a,
            _meta: { idempotencyKey: b },
          },
        },
        CallToolResultSchema,
      )
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).code).toBe(-32602);
    expect((refused as McpError).message).toContain('Two different idempotency keys');
    for (const key of [a, b]) {
      await expect(
        temporal.client.workflow.getHandle(mcpCallWorkflowId(key, { caller: ALICE })).describe(),
      ).rejects.toThrow(WorkflowNotFoundError);
    }
  });
});

describe('two callers with their own tokens', () => {
  test("the same key used by a stranger is a new call of the stranger's, never an IDEMPOTENCY_CONFLICT", async () => {
    const [alice, bob] = [await connect('alice-secret'), await connect('bob-secret')];
    const key = unique('shared-key');
    const mine = await alice.callTool({
      name: 'create_order',
      arguments: { item: 'book', quantity: 1 },
      _meta: { idempotencyKey: key },
    });
    const theirs = await bob.callTool({
      name: 'create_order',
      arguments: { item: 'pen', quantity: 9 },
      _meta: { idempotencyKey: key },
    });
    expect(theirs.isError).toBeFalsy();
    expect(JSON.stringify(theirs.content)).not.toContain('book');
    expect(theirs.structuredContent).not.toEqual(mine.structuredContent);
    expect([effectsOf(key, ALICE), effectsOf(key, BOB)]).toEqual([1, 1]);
    const ownConflict = await alice.callTool({
      name: 'create_order',
      arguments: { item: 'pen', quantity: 9 },
      _meta: { idempotencyKey: key },
    });
    expect(JSON.stringify(ownConflict.content)).toContain('IDEMPOTENCY_CONFLICT');
  });

  test("a stranger's tasks/get, tasks/result and tasks/cancel are answered as for a task that does not exist", async () => {
    const [alice, bob] = [await connect('alice-secret'), await connect('bob-secret')];
    const created = await alice.request(
      {
        method: 'tools/call',
        params: { name: 'wait_for_cancel', arguments: { label: 'mine' }, task: { ttl: 60_000 } },
      },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;
    const madeUp = mcpCallWorkflowId(unique('nobody'), { caller: BOB });
    for (const [asStranger, asUnknown] of [
      [bob.experimental.tasks.getTask(taskId), bob.experimental.tasks.getTask(madeUp)],
      [
        bob.request({ method: 'tasks/result', params: { taskId } }, CallToolResultSchema),
        bob.request({ method: 'tasks/result', params: { taskId: madeUp } }, CallToolResultSchema),
      ],
      [bob.experimental.tasks.cancelTask(taskId), bob.experimental.tasks.cancelTask(madeUp)],
    ] as const) {
      expect(await refusalOf(asStranger, taskId)).toBe(await refusalOf(asUnknown, madeUp));
    }
    expect((await alice.experimental.tasks.getTask(taskId)).status).toBe('working');
    expect((await temporal.client.workflow.getHandle(taskId).describe()).status.name).toBe('RUNNING');
    await alice.experimental.tasks.cancelTask(taskId);
  });

  test("tasks/list shows a caller its own tasks and none of a stranger's", async () => {
    const [alice, bob] = [await connect('alice-secret'), await connect('bob-secret')];
    await expectTasksListedToTheirCallersOnly(alice, bob);
  });

  test("get_agent_run answers a stranger's run id exactly like an id that does not exist", async () => {
    const [alice, bob] = [await connect('alice-secret'), await connect('bob-secret')];
    const started = await alice.callTool({
      name: 'start_agent_run',
      arguments: { goal: 'nothing', model: { provider: 'scripted', script: [{ text: 'done', final: true }] } },
    });
    const { runId } = started.structuredContent as { runId: string };
    const read = (client: McpClient, id: string) =>
      client.callTool({ name: 'get_agent_run', arguments: { runId: id } });
    await waitFor('the run to be readable by its caller', async () => (await read(alice, runId)).isError !== true);
    const stranger = await read(bob, runId);
    const unknown = await read(bob, 'agent-run-mcp-nobody');
    expect(stranger.isError).toBe(true);
    expect(JSON.stringify(stranger.content).replaceAll(runId, 'ID')).toBe(
      JSON.stringify(unknown.content).replaceAll('agent-run-mcp-nobody', 'ID'),
    );
    const otherwise = await read(bob, 'some-workflow-started-elsewhere');
    expect(JSON.stringify(otherwise.content)).toContain('NOT_FOUND');
  });

  test("a durable server made without the session's caller is refused, so no session falls into another scope", async () => {
    const careless = await startMcpHttpListener({
      port: 0,
      tokens: TOKENS,
      createServer: () => createDurableMcpServer({ client: temporal.client, taskQueue, catalog: registry.catalog() }),
    });
    try {
      const client = new McpClient({ name: 'test', version: '1' });
      await expect(
        client.connect(
          new StreamableHTTPClientTransport(new URL(careless.url), {
            requestInit: { headers: { Authorization: 'Bearer alice-secret' } },
          }),
        ),
      ).rejects.toThrow(/another caller/);
    } finally {
      await careless.close();
    }
  });
});

describe('over stdio', () => {
  test('`mcp --stdio`, driven by an SDK client: a repeated call with _meta.idempotencyKey runs once', async () => {
    const client = new McpClient({ name: 'stdio-test', version: '1' });
    const env = Object.fromEntries(
      Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined),
    );
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [
          require.resolve('tsx/cli'),
          require.resolve('../../src/mcp/server/mcp-command.ts'),
          '--stdio',
          '--no-worker',
          '--name',
          'stdio-test',
        ],
        env: {
          ...env,
          TEMPORAL_ADDRESS: testServer().address,
          TEMPORAL_NAMESPACE: testServer().namespace,
          DURABLE_TOOLS_TASK_QUEUE: taskQueue,
          DURABLE_TOOLS_TOOLS_MODULE: require.resolve('../support/test-tools-module.ts'),
        },
        stderr: 'ignore',
      }),
    );
    mcp.track(client);
    const key = unique('stdio');
    const call = () =>
      client.callTool({
        name: 'create_order',
        arguments: { item: 'cup', quantity: 1 },
        _meta: { idempotencyKey: key },
      });
    const first = await call();
    expect(first.isError).toBeFalsy();
    expect((await call()).structuredContent).toEqual(first.structuredContent);
    const workflowId = mcpCallWorkflowId(key, { server: 'stdio-test' });
    expect(recording.calls.filter((c) => isStepKeyOf(workflowId, 1, c.idempotencyKey))).toHaveLength(1);
  }, 180_000);
});
