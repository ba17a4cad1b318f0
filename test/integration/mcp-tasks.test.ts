import { killProcess, spawnTestWorkerProcess } from '../support/worker-process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { getAgentRunState, startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { ProtocolError } from '@modelcontextprotocol/client';
import { McpClientPool } from '../../src/mcp/client/mcp-client-pool';
import { startMcpHttpListener } from '../../src/mcp/server/mcp-http-listener';
import { poolTaskChannel } from '../../src/mcp/client/mcp-task-channel';
import { createDurableMcpServer } from '../../src/mcp/server/mcp-server';
import { defineTool } from '../../src/tools/define-tool';
import { createToolRegistry } from '../../src/tools/tool-registry';
import { createWorker } from '../../src/runtime/create-worker';
import type { AgentRunInput } from '../../src/contract/agent-run-types';
import { startEverythingHttp, type EverythingHttp } from '../support/mcp-everything';
import { startMcpRecordingProxy, type McpRecordingProxy } from '../support/mcp-recording-proxy';
import { MCP_TASK_WORKER, MCP_TASK_WORKER_LEASE_MS, mcpTaskWorkerConfig } from '../support/mcp-task-worker';
import { createSqliteTestWorker, sqliteStoresIn, type SqliteStorePaths } from '../support/sqlite-test-worker';
import { useTestTemporal, createTestWorker, testServer, uniqueTaskQueue } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

/**
 * MCP tools that run as tasks (issue 16, item 4) on the real Temporal server, against server-everything's
 * `simulate-research-query` (a task-only tool of 4 stages of 1 s) served over Streamable HTTP by its own process.
 * A recording proxy in front of it sees every JSON-RPC message: how many tasks were created, which task each poll
 * named, from which session.
 */

const TOOL = 'research__simulate-research-query';

const temporal = useTestTemporal();
let everything: EverythingHttp;
let proxy: McpRecordingProxy;
let workDir: string;
beforeAll(async () => {
  everything = await startEverythingHttp();
  workDir = mkdtempSync(join(tmpdir(), 'mcp-tasks-'));
});
afterAll(async () => {
  await everything?.stop();
});
beforeEach(async () => {
  proxy = await startMcpRecordingProxy(everything.url);
});
afterEach(async () => {
  await proxy.close();
});

function research(topic: string): AgentRunInput {
  return {
    goal: `research ${topic}`,
    // The tool changes data (not read-only), so it needs approval by default; these runs waive it.
    approval: { tools: { [TOOL]: 'never' } },
    model: {
      provider: 'scripted',
      script: [{ toolCalls: [{ name: TOOL, arguments: { topic } }] }, { text: 'done', final: true }],
    },
  };
}

/** The task ids the `tasks/get` polls named. */
function polledTaskIds(): unknown[] {
  return proxy.calls('tasks/get').map((message) => message.params?.['taskId']);
}

/** A worker in this process with the given SQLite stores (the same files a killed worker used). */
function inProcessWorker(taskQueue: string, stores: SqliteStorePaths) {
  return createSqliteTestWorker(temporal, taskQueue, stores, {
    tools: [],
    mcp: mcpTaskWorkerConfig(proxy.url),
    leaseMs: MCP_TASK_WORKER_LEASE_MS,
    approvals: { allowRunsToWaive: true },
    workerOptions: { maxHeartbeatThrottleInterval: '1s' },
  });
}

test('an MCP task survives a SIGKILLed worker: the next worker polls the same task and gets its result once', async () => {
  const taskQueue = uniqueTaskQueue('mcp-task-kill');
  const stores = sqliteStoresIn(workDir, 'kill');
  const first = await spawnTestWorkerProcess(MCP_TASK_WORKER, taskQueue, { mcpUrl: proxy.url, ...stores });
  // The first worker's first poll is kept by the proxy, unanswered: the worker dies between create and result.
  proxy.hold((message) => message.method === 'tasks/get');
  const handle = await startAgentRun(temporal.client, research('durable execution'), { taskQueue });
  await waitFor('the first worker polls its task', () => proxy.calls('tasks/get').length >= 1);
  await killProcess(first);
  const created = proxy.calls('tools/call');
  expect(created).toHaveLength(1);
  expect(created[0]?.params?.['task']).toBeDefined();
  const [firstPoll] = proxy.calls('tasks/get');
  const taskId = firstPoll?.params?.['taskId'];
  expect(typeof taskId).toBe('string');
  proxy.hold(() => false); // the kept poll is never answered: its worker is dead

  const { worker, close } = await inProcessWorker(taskQueue, stores);
  const result = await worker.runUntil(waitForAgentRun(handle));
  await close();

  expect(result.status).toBe('completed');
  const output = (result.steps[0]?.observation as { output?: { content: { text: string }[] } }).output;
  expect(output?.content[0]?.text).toContain('# Research Report: durable execution');
  // One task in all: never created again; every poll, before and after the kill, named it, in its session.
  expect(proxy.calls('tools/call')).toHaveLength(1);
  expect(polledTaskIds().length).toBeGreaterThanOrEqual(2);
  expect(new Set(polledTaskIds())).toEqual(new Set([taskId]));
  expect(new Set(proxy.calls('tasks/get').map((m) => m.sessionId))).toEqual(new Set([firstPoll?.sessionId]));
  // The result was fetched once, by the second worker.
  expect(proxy.calls('tasks/result')).toHaveLength(1);
  expect(proxy.calls('tasks/cancel')).toHaveLength(0);
});

test('a running MCP task shows its status message as the step progress, and ends with the tool result', async () => {
  const taskQueue = uniqueTaskQueue('mcp-task-progress');
  const { worker, close } = await inProcessWorker(taskQueue, sqliteStoresIn(workDir, 'progress'));
  // The result is held until the progress was seen, so the step surely runs while the test looks (a loaded machine).
  proxy.hold((message) => message.method === 'tasks/result');
  const result = await worker.runUntil(async () => {
    const handle = await startAgentRun(temporal.client, research('tasks'), { taskQueue });
    const progress = await waitFor('a stage of the research in the run state', async () => {
      const step = (await getAgentRunState(temporal.client, handle.workflowId)).steps[0];
      return step?.status === 'running' && step.progress?.message?.match(/\.\.\.$/) ? step.progress : undefined;
    });
    expect(progress.message).toMatch(/^(Gathering sources|Analyzing content|Synthesizing findings|Generating report)/);
    proxy.release();
    return waitForAgentRun(handle);
  });
  await close();
  expect(result.status).toBe('completed');
  expect(result.steps[0]?.observation).toMatchObject({ status: 'ok' });
  expect(proxy.calls('tools/call')).toHaveLength(1);
  expect(proxy.calls('tasks/result')).toHaveLength(1);
});

test('cancelling the run during an MCP task sends tasks/cancel for that task', async () => {
  const taskQueue = uniqueTaskQueue('mcp-task-cancel');
  const { worker, close } = await inProcessWorker(taskQueue, sqliteStoresIn(workDir, 'cancel'));
  // Polls after the first are kept unanswered, so the task is surely still being polled when the run is cancelled.
  proxy.hold((message) => message.method === 'tasks/get' && proxy.calls('tasks/get').length >= 1);
  const result = await worker.runUntil(async () => {
    const handle = await startAgentRun(temporal.client, research('cancellation'), { taskQueue });
    await waitFor('the task polled', () => proxy.calls('tasks/get').length >= 1);
    await handle.cancel();
    return waitForAgentRun(handle);
  });
  await close();
  expect(result.status).toBe('cancelled');
  expect(result.steps[0]?.observation).toMatchObject({ status: 'error', code: 'CANCELLED' });
  const cancels = proxy.calls('tasks/cancel');
  expect(cancels).toHaveLength(1);
  expect(cancels[0]?.params?.['taskId']).toBe(polledTaskIds()[0]);
  expect(proxy.calls('tasks/result')).toHaveLength(0);
});

test('an optional task tool of our own durable MCP server runs as a task when its server config says when-supported', async () => {
  // The inner side: our MCP server over HTTP, each call a workflow run by its own worker (task id = workflow id).
  const innerQueue = uniqueTaskQueue('mcp-task-inner');
  const slowDouble = defineTool({
    name: 'slow_double',
    description: 'Doubles a number, slowly.',
    input: z.object({ n: z.number() }),
    output: z.object({ doubled: z.number() }),
    effect: 'read-only',
    idempotent: true,
  }).implement(async ({ n }) => {
    await new Promise((r) => setTimeout(r, 1_500));
    return { doubled: n * 2 };
  });
  const registry = createToolRegistry([slowDouble]);
  const inner = await createTestWorker(temporal, { tools: registry.list(), taskQueue: innerQueue });
  const listener = await startMcpHttpListener({
    port: 0,
    createServer: () =>
      createDurableMcpServer({
        client: temporal.client,
        taskQueue: innerQueue,
        catalog: registry.catalog(),
        agentRuns: false,
      }),
  });
  const ours = await startMcpRecordingProxy(listener.url);
  // The outer side: a worker whose MCP server is ours, optional task tools run as tasks.
  const outerQueue = uniqueTaskQueue('mcp-task-outer');
  const { worker: outer, close } = await createWorker({
    // Stores not given here stay in memory (durable ones are the default).
    stores: 'memory',
    tools: [],
    mcp: { mcpServers: { durable: { url: ours.url, trust: 'trusted', tasks: { use: 'when-supported' } } } },
    connection: temporal.nativeConnection,
    settings: { namespace: testServer().namespace, taskQueue: outerQueue },
    workflowBundle: { codePath: testServer().bundlePath },
  });
  const input: AgentRunInput = {
    goal: 'double 21',
    model: {
      provider: 'scripted',
      script: [{ toolCalls: [{ name: 'durable__slow_double', arguments: { n: 21 } }] }, { text: 'done', final: true }],
    },
  };
  try {
    const result = await inner.runUntil(
      outer.runUntil(async () =>
        waitForAgentRun(await startAgentRun(temporal.client, input, { taskQueue: outerQueue })),
      ),
    );
    expect(result.status).toBe('completed');
    expect(result.steps[0]?.observation).toMatchObject({
      status: 'ok',
      output: { structuredContent: { doubled: 42 } },
    });
    const created = ours.calls('tools/call');
    expect(created).toHaveLength(1);
    expect(created[0]?.params?.['task']).toBeDefined();
    expect(ours.calls('tasks/get').length).toBeGreaterThanOrEqual(1);
    expect(ours.calls('tasks/result')).toHaveLength(1);
  } finally {
    await close();
    await ours.close();
    await listener.close();
  }
});

test("a task whose session the server forgot is looked up through the worker's own session, which says it is unknown", async () => {
  const pools = [0, 1].map(() => new McpClientPool({ research: { url: proxy.url, trust: 'trusted' as const } }));
  const [creator, poller] = pools.map((pool) => poolTaskChannel(pool, 'research', 'simulate-research-query'));
  try {
    const created = await creator!.create(
      { topic: 'sessions' },
      { signal: new AbortController().signal, idempotencyKey: 'k-1', ttlMs: 60_000 },
    );
    if (!('ref' in created)) throw new Error('server-everything should have created a task');
    expect(created.ref.session?.sessionId).toEqual(expect.any(String));
    // In its own session (rejoined by another client) the task is found...
    await expect(poller!.get(created.ref, new AbortController().signal)).resolves.toMatchObject({
      taskId: created.ref.taskId,
    });
    // ...in a session the server does not have, the poller asks in its own one, where it is unknown.
    const gone = { taskId: created.ref.taskId, session: { sessionId: 'no-such-session' } };
    const error = await poller!.get(gone, new AbortController().signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).message).toMatch(/not found/i);
    const sessions = proxy.calls('tasks/get').map((message) => message.sessionId);
    expect(sessions.slice(-2)[0]).toBe('no-such-session');
    expect(sessions.slice(-1)[0]).not.toBe('no-such-session');
  } finally {
    await Promise.all(pools.map((pool) => pool.close()));
  }
});
