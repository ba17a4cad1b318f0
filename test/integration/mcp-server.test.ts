import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { approveStep, listPendingApprovals } from '../../src/client/approval-client';
import { argumentsDigest } from '../../src/activities/arguments-digest';
import { MCP_IDEMPOTENCY_KEY_META } from '../../src/mcp/client/mcp-client-pool';
import { mcpCallWorkflowId } from '../../src/mcp/server/mcp-server';
import { createToolRegistry } from '../../src/tools/tool-registry';
import { createWireTool } from '../support/approval-tools';
import { useMcpTestListener } from '../support/mcp-test-listener';
import { createTestWorker, testServer, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { createRecordingTools, createWaitForCancelTool } from '../support/test-tools';
import { waitFor } from '../support/wait-for';

const run = promisify(execFile);
/** The caller of the listener's one token (`token` is named `default`). */
const TOKEN_CALLER = { subject: 'token:default' };
/** The inspector's command line alone (not the whole inspector, whose web UI is ~120 packages more). */
const INSPECTOR = require.resolve('@modelcontextprotocol/inspector-cli/build/cli.js');
/** inspector-cli 1.0.3 looks for its package.json relative to the working directory: run it from its build folder. */
const INSPECTOR_CWD = dirname(INSPECTOR);

const temporal = useTestTemporal({
  worker: (temporal) => createTestWorker(temporal, { tools: registry.list(), taskQueue }),
});
const taskQueue = uniqueTaskQueue('mcp-server');
const recording = createRecordingTools();
const cancelled: string[] = [];
const waitForCancel = createWaitForCancelTool((label) => cancelled.push(label));
const { tool: wire, wired } = createWireTool();
const registry = createToolRegistry([...recording.tools, waitForCancel, wire]);

const mcp = useMcpTestListener(temporal, {
  taskQueue,
  catalog: () => registry.catalog(),
  tokens: [{ name: 'default', token: 'test-token' }],
});
const connect = (): Promise<McpClient> => mcp.connect('test-token');

describe('our MCP server over Streamable HTTP, driven by an SDK client', () => {
  test('lists the tools with their schemas and annotations, not the undo tools, plus the agent-run tools', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['add', 'create_order', 'start_agent_run', 'get_agent_run']));
    expect(names).not.toContain('cancel_order');
    expect(tools.find((t) => t.name === 'add')).toMatchObject({
      inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
      annotations: { readOnlyHint: true, idempotentHint: true },
      execution: { taskSupport: 'optional' },
    });
    await client.close();
  });

  test('a call runs as a workflow; repeating it with the same key returns the first result without running again', async () => {
    const client = await connect();
    const key = `key-${Date.now()}`;
    const call = (args: Record<string, unknown>) =>
      client.callTool({ name: 'create_order', arguments: args, _meta: { [MCP_IDEMPOTENCY_KEY_META]: key } });
    const first = await call({ item: 'book', quantity: 2 });
    const second = await call({ item: 'book', quantity: 2 });
    expect(first.isError).toBeFalsy();
    expect(second.structuredContent).toEqual(first.structuredContent);
    const workflowId = mcpCallWorkflowId(key, { caller: TOKEN_CALLER });
    expect(recording.calls.filter((c) => c.idempotencyKey.startsWith(`${workflowId}/`))).toHaveLength(1);
    const conflict = await call({ item: 'pen', quantity: 1 });
    expect(conflict.isError).toBe(true);
    expect(JSON.stringify(conflict.content)).toContain('IDEMPOTENCY_CONFLICT');
    await client.close();
  });

  test('bad arguments and an unknown tool come back as isError results the caller can read', async () => {
    const client = await connect();
    const bad = await client.callTool({ name: 'add', arguments: { a: '1', b: 2 } });
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toContain('INVALID_ARGUMENTS');
    const unknown = await client.callTool({ name: 'nope', arguments: {} });
    expect(JSON.stringify(unknown.content)).toContain('UNKNOWN_TOOL');
    await client.close();
  });

  test("a client's cancel reaches the running call: the workflow is cancelled and the tool sees its signal", async () => {
    const client = await connect();
    const key = `cancel-${Date.now()}`;
    const abort = new AbortController();
    const pending = client.callTool(
      { name: 'wait_for_cancel', arguments: { label: key }, _meta: { [MCP_IDEMPOTENCY_KEY_META]: key } },
      CallToolResultSchema,
      { signal: abort.signal },
    );
    const handle = temporal.client.workflow.getHandle(mcpCallWorkflowId(key, { caller: TOKEN_CALLER }));
    await waitFor(
      'the tool call to be running',
      async () => ((await handle.describe()).raw.pendingActivities?.length ?? 0) > 0,
    );
    abort.abort();
    await expect(pending).rejects.toThrow();
    await waitFor('the workflow to be cancelled', async () => (await handle.describe()).status.name === 'CANCELLED');
    expect(cancelled).toContain(key);
    await client.close();
  });

  test('a call made as a task: task id = workflow id, tasks/get and tasks/result from Temporal, tasks/cancel cancels', async () => {
    const client = await connect();
    const created = await client.request(
      { method: 'tools/call', params: { name: 'add', arguments: { a: 20, b: 22 }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;
    expect(taskId).toMatch(/^mcp-call-/);
    await waitFor(
      'the task to complete',
      async () => (await client.experimental.tasks.getTask(taskId)).status === 'completed',
    );
    const result = await client.request({ method: 'tasks/result', params: { taskId } }, CallToolResultSchema);
    expect(result.structuredContent).toEqual({ sum: 42 });

    const long = await client.request(
      {
        method: 'tools/call',
        params: { name: 'wait_for_cancel', arguments: { label: 'task' }, task: { ttl: 60_000 } },
      },
      CreateTaskResultSchema,
    );
    const handle = temporal.client.workflow.getHandle(long.task.taskId);
    await waitFor(
      'the task to be running',
      async () => ((await handle.describe()).raw.pendingActivities?.length ?? 0) > 0,
    );
    const cancel = await client.experimental.tasks.cancelTask(long.task.taskId);
    expect(cancel.status).toBe('cancelled');
    await waitFor('the workflow to be cancelled', async () => (await handle.describe()).status.name === 'CANCELLED');
    await client.close();
  });

  test('a tool that needs approval answers APPROVAL_REQUIRED at once; once approved, the same key returns its result', async () => {
    const client = await connect();
    const key = `wire-${Date.now()}`;
    const call = () =>
      client.callTool({ name: 'wire', arguments: { amount: 500 }, _meta: { [MCP_IDEMPOTENCY_KEY_META]: key } });
    const workflowId = mcpCallWorkflowId(key, { caller: TOKEN_CALLER });
    const digest = argumentsDigest({ amount: 500 });

    const first = await call();
    expect(first.isError).toBe(true);
    const text = JSON.stringify(first.content);
    expect(text).toContain('APPROVAL_REQUIRED: \\"wire\\" needs a human approval before it runs; nothing has run yet.');
    expect(text).toContain(`durable-tools approve ${workflowId} 1 --digest ${digest}`);
    expect(wired).toEqual([]);

    const listed = await waitFor('the call to be listed as waiting', async () =>
      (await listPendingApprovals(temporal.client, { taskQueue })).find((p) => p.workflowId === workflowId),
    );
    expect(listed).toMatchObject({ stepId: 1, tool: 'wire', digest, arguments: { amount: 500 } });
    const task = await client.experimental.tasks.getTask(workflowId);
    expect(task).toMatchObject({ status: 'working', statusMessage: expect.stringContaining('approval of wire') });

    await approveStep(temporal.client, workflowId, { stepId: 1, digest, approver: 'alice' });
    const second = await call();
    expect(second.isError).toBeFalsy();
    expect(second.structuredContent).toEqual({ wired: 500 });
    expect(await call()).toMatchObject({ structuredContent: { wired: 500 } });
    expect(wired).toEqual([500]);
    await client.close();
  });

  test('refuses a foreign Host or Origin (DNS rebinding) and a missing bearer token', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    const post = (headers: Record<string, string>) =>
      fetch(mcp.listener().url, { method: 'POST', body, headers: { 'Content-Type': 'application/json', ...headers } });
    expect((await post({ Authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await post({ Authorization: 'Bearer test-token', Origin: 'http://evil.example' })).status).toBe(403);
    const hostRefused = await run('curl', [
      '-s',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      '-H',
      'Host: evil.example',
      '-X',
      'POST',
      mcp.listener().url,
    ]).catch((e: { stdout: string }) => e);
    expect(hostRefused.stdout).toBe('403');
  });
});

describe('our MCP server driven by the real inspector CLI', () => {
  test('over HTTP: tools/call with a bearer token and an idempotency key in _meta', async () => {
    const key = `inspector-${Date.now()}`;
    const { stdout } = await run(
      process.execPath,
      [
        INSPECTOR,
        '--cli',
        mcp.listener().url,
        '--transport',
        'http',
        '--header',
        'Authorization: Bearer test-token',
        '--method',
        'tools/call',
        '--tool-name',
        'add',
        '--tool-arg',
        'a=2',
        'b=40',
        '--tool-metadata',
        `${MCP_IDEMPOTENCY_KEY_META}=${key}`,
      ],
      { cwd: INSPECTOR_CWD },
    );
    expect(JSON.parse(stdout)).toMatchObject({ structuredContent: { sum: 42 } });
    const call = await temporal.client.workflow.getHandle(mcpCallWorkflowId(key, { caller: TOKEN_CALLER })).describe();
    expect(call.status.name).toBe('COMPLETED');
  });

  test('over stdio: `npm run mcp -- --stdio` started by the inspector, with no worker of its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dt-mcp-'));
    const { stdout } = await run(
      process.execPath,
      [
        INSPECTOR,
        '--cli',
        process.execPath,
        require.resolve('tsx/cli'),
        require.resolve('../../src/mcp/server/mcp-command.ts'),
        '--stdio',
        '--no-worker',
        '--method',
        'tools/call',
        '--tool-name',
        'add',
        '--tool-arg',
        'a=1',
        'b=2',
      ],
      {
        env: {
          ...process.env,
          TEMPORAL_ADDRESS: testServer().address,
          DURABLE_TOOLS_TASK_QUEUE: taskQueue,
          DURABLE_TOOLS_TOOLS_MODULE: require.resolve('../support/test-tools-module.ts'),
          DURABLE_TOOLS_SQLITE_PATH: join(dir, 'keys.sqlite'),
        },
        timeout: 90_000,
        cwd: INSPECTOR_CWD,
      },
    );
    expect(JSON.parse(stdout)).toMatchObject({ structuredContent: { sum: 3 } });
  });
});
