/**
 * Issue 48, the server side: the durable MCP server answers MCP 2026-07-28 (stateless: no `initialize`, no session,
 * each request's version and capabilities in its `_meta`) beside 2025-11-25 on one endpoint. An MCP SDK v2 client
 * pinned to 2026-07-28 calls a tool whose effect is counted at a downstream; the HTTP exchange is cut mid-call and the
 * client re-issues the request with the same key: one effect, the same result. An approval is asked and answered
 * through an `InputRequiredResult`; a tampered request state, a state of another caller and a state re-issued with
 * other arguments are refused with structured errors and decide nothing. Durable calls are tasks of the tasks
 * extension (`tasks/get`, `tasks/update`), each caller's own.
 */
import { z } from 'zod';
import { defineTool } from '../../src/tools/define-tool';
import { mcpApproversByName } from '../../src/mcp/server/mcp-approver-rules';
import { mcpCallWorkflowId } from '../../src/mcp/server/mcp-server';
import { createToolRegistry } from '../../src/tools/tool-registry';
import { createWireTool } from '../support/approval-tools';
import { startCountingHttpServer, type CountingHttpServer } from '../support/counting-http-server';
import { useMcpTestListener } from '../support/mcp-test-listener';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttpTransport,
} from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startCli, waitForCliOutput } from '../support/cli-process';
import { testServer } from '../support/temporal-test-env';

const TOKENS = [
  { name: 'alice', token: 'alice-secret' },
  { name: 'bob', token: 'bob-secret' },
];
const ALICE = { subject: 'token:alice' };

let downstream: CountingHttpServer;
/** Lets the effect tool return (the test cuts the stream while it waits). */
let release: () => void = () => {};
let released = Promise.resolve();
const effectTool = defineTool({
  name: 'post_effect',
  description: 'Posts one effect downstream, then waits until the test lets it return.',
  input: z.object({ note: z.string() }),
  output: z.object({ effects: z.number(), note: z.string() }),
  effect: 'irreversible',
  idempotent: false,
  approval: 'never',
}).implement(async ({ note }, ctx) => {
  await fetch(`${downstream.url}/effect?key=${encodeURIComponent(ctx.idempotencyKey)}`, { method: 'POST' });
  await released;
  return { effects: downstream.calls.length, note };
});
const { tool: wire, wired } = createWireTool();
let registry: ReturnType<typeof createToolRegistry>;
const taskQueue = uniqueTaskQueue('mcp-modern');
const temporal = useTestTemporal({
  worker: async (t) => {
    downstream = await startCountingHttpServer(() => ({ status: 200, body: {} }));
    registry = createToolRegistry([effectTool, wire]);
    return createTestWorker(t, { tools: registry.list(), taskQueue });
  },
});
// alice approves (her own calls too, so one person can answer her own InputRequiredResult); bob does not.
const approvals = { approvers: mcpApproversByName(['alice']), allowSelfApproval: true };
const mcp = useMcpTestListener(temporal, { taskQueue, catalog: () => registry.catalog(), tokens: TOKENS, approvals });
afterAll(async () => {
  await downstream.close();
});

const unique = (label: string) => `${label}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
let amounts = 500;
const nextAmount = () => ++amounts;

/** One 2026-07-28 request by hand (the envelope in `_meta`, the standard headers), answered as JSON. */
async function modernRequest(
  token: string,
  method: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown> = { extensions: { 'io.modelcontextprotocol/tasks': {} } },
): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } }> {
  const name = typeof params['name'] === 'string' ? params['name'] : params['taskId'];
  const response = await fetch(mcp.listener().url, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': method,
      ...(typeof name === 'string' ? { 'Mcp-Name': name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          ...(params['_meta'] as object | undefined),
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': capabilities,
        },
      },
    }),
  });
  const text = await response.text();
  const json = text.startsWith('{') ? text : /^data: (.*)$/m.exec(text)?.[1];
  if (!json) throw new Error(`Not a JSON-RPC answer (HTTP ${response.status}): ${text}`);
  return JSON.parse(json) as { result?: Record<string, unknown>; error?: { code: number; message: string } };
}

test('2026-07-28: discovery without a session, cache hints on tools/list, a 2025-11-25 client beside it', async () => {
  const modern = await mcp.connectModern('alice-secret');
  expect(modern.getNegotiatedProtocolVersion()).toBe('2026-07-28');
  const listed = await modern.request({ method: 'tools/list', params: {} }, z.looseObject({}));
  expect(listed).toMatchObject({ ttlMs: 300_000, cacheScope: 'private' });
  expect((listed['tools'] as { name: string }[]).map((t) => t.name)).toEqual(
    expect.arrayContaining(['post_effect', 'wire', 'decide_approval']),
  );
  expect(mcp.listener().sessionCount()).toBe(0);

  const legacy = await mcp.connect('alice-secret');
  expect((await legacy.listTools()).tools.map((t) => t.name)).toContain('post_effect');
  expect(mcp.listener().sessionCount()).toBe(1);
});

test('the stream is cut mid-call, the client re-issues with the same key: one effect, the same result', async () => {
  released = new Promise((resolve) => (release = resolve));
  let cut: AbortController | undefined;
  const client = await mcp.connectModern(
    'alice-secret',
    {},
    {
      // The first tools/call's HTTP exchange can be cut from here, as a network would.
      fetch: (url, init) => {
        const isCall = typeof init?.body === 'string' && init.body.includes('"tools/call"');
        if (!isCall || cut) return fetch(url, init);
        cut = new AbortController();
        return fetch(url, { ...init, signal: cut.signal });
      },
    },
  );
  const key = unique('effect');
  const call = () =>
    client.callTool({ name: 'post_effect', arguments: { note: 'once' }, _meta: { idempotencyKey: key } });
  const before = downstream.calls.length;
  const first = call();
  await waitFor('the effect', () => downstream.calls.length === before + 1);
  cut!.abort();
  await expect(first).rejects.toThrow();

  const reissued = call();
  release();
  const result = await reissued;
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toEqual({ effects: before + 1, note: 'once' });
  // Once more after the end: the first result again, nothing runs.
  expect((await call()).structuredContent).toEqual(result.structuredContent);
  expect(downstream.calls.length).toBe(before + 1);
  expect(downstream.calls.at(-1)!.path).toContain(encodeURIComponent(mcpCallWorkflowId(key, { caller: ALICE })));
});

test('an approval is asked with an InputRequiredResult and answered by re-issuing the call', async () => {
  const asked: unknown[] = [];
  const client = await mcp.connectModern('alice-secret', { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params);
    return { action: 'accept', content: { decision: 'approve' } };
  });
  const amount = nextAmount();
  const result = await client.callTool({ name: 'wire', arguments: { amount }, _meta: { idempotencyKey: unique('w') } });
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toEqual({ wired: amount });
  expect(wired.filter((a) => a === amount)).toHaveLength(1);
  expect(asked).toHaveLength(1);
  expect(JSON.stringify(asked[0])).toContain(`{\\"amount\\":${amount}}`);
});

/** alice's wire call in manual mode: the InputRequiredResult as it came, and how to re-issue the call. */
async function askedApproval(amount: number) {
  const client = await mcp.connectModern('alice-secret', {
    capabilities: { elicitation: { form: {} } },
    inputRequired: { autoFulfill: false },
  });
  const key = unique('manual');
  const params = { name: 'wire', arguments: { amount }, _meta: { idempotencyKey: key } };
  const asked = (await client.request(
    { method: 'tools/call', params },
    z.looseObject({ resultType: z.literal('input_required') }),
    { allowInputRequired: true },
  )) as unknown as { inputRequests: Record<string, unknown>; requestState: string };
  const [inputKey] = Object.keys(asked.inputRequests);
  const answer = { [inputKey!]: { action: 'accept', content: { decision: 'approve' } } };
  return { asked, answer, key, params, workflowId: mcpCallWorkflowId(key, { caller: ALICE }) };
}

test('a tampered request state, or one of another caller, is refused (-32602) and decides nothing', async () => {
  const amount = nextAmount();
  const { asked, answer, params, workflowId } = await askedApproval(amount);
  const [head, body, mac] = asked.requestState.split('.');
  const payload = JSON.parse(Buffer.from(body!, 'base64url').toString()) as { p: { digest: string } };
  payload.p.digest = 'f'.repeat(64);
  const tampered = [head, Buffer.from(JSON.stringify(payload)).toString('base64url'), mac].join('.');

  const refusedTampered = await modernRequest('alice-secret', 'tools/call', {
    ...params,
    inputResponses: answer,
    requestState: tampered,
  });
  expect(refusedTampered.error).toMatchObject({ code: -32602, data: { reason: 'invalid_request_state' } });

  // bob holds alice's genuine state and answer: bound to alice, refused for him.
  const refusedBob = await modernRequest('bob-secret', 'tools/call', {
    ...params,
    inputResponses: answer,
    requestState: asked.requestState,
  });
  expect(refusedBob.error).toMatchObject({ code: -32602, data: { reason: 'invalid_request_state' } });

  const state = await modernRequest('alice-secret', 'tasks/get', { taskId: workflowId });
  expect(state.result).toMatchObject({ taskId: workflowId, status: 'input_required' });
  expect(wired).not.toContain(amount);
});

test('a genuine state re-issued with other arguments is refused (APPROVAL_ARGUMENTS_CHANGED); the right one runs', async () => {
  const amount = nextAmount();
  const { asked, answer, params, workflowId } = await askedApproval(amount);
  const swapped = await modernRequest(
    'alice-secret',
    'tools/call',
    { ...params, arguments: { amount: amount + 1_000 }, inputResponses: answer, requestState: asked.requestState },
    { elicitation: { form: {} } },
  );
  expect(swapped.result).toMatchObject({
    isError: true,
    _meta: { 'io.durable-tools/error': { code: 'APPROVAL_ARGUMENTS_CHANGED' } },
  });
  expect((await modernRequest('alice-secret', 'tasks/get', { taskId: workflowId })).result).toMatchObject({
    status: 'input_required',
  });

  const answered = await modernRequest(
    'alice-secret',
    'tools/call',
    { ...params, inputResponses: answer, requestState: asked.requestState },
    { elicitation: { form: {} } },
  );
  expect(answered.result).toMatchObject({ structuredContent: { wired: amount } });
  expect(wired.filter((a) => a === amount)).toHaveLength(1);
});

test('tasks extension: a call is a task; tasks/get shows the approval, tasks/update answers it; callers isolated', async () => {
  const amount = nextAmount();
  const key = unique('task');
  const created = await modernRequest('alice-secret', 'tools/call', {
    name: 'wire',
    arguments: { amount },
    _meta: { idempotencyKey: key },
  });
  const taskId = mcpCallWorkflowId(key, { caller: ALICE });
  expect(created.result).toMatchObject({ resultType: 'task', taskId, status: 'working', ttlMs: null });

  let waiting: Record<string, unknown> = {};
  await waitFor('the approval to wait', async () => {
    waiting = (await modernRequest('alice-secret', 'tasks/get', { taskId })).result ?? {};
    return waiting['status'] === 'input_required';
  });
  const [inputKey] = Object.keys(waiting['inputRequests'] as object);
  expect(inputKey).toMatch(/^approval\//);

  // bob sees nothing of alice's task, and cannot answer it.
  expect((await modernRequest('bob-secret', 'tasks/get', { taskId })).error).toMatchObject({ code: -32602 });
  const bobUpdate = await modernRequest('bob-secret', 'tasks/update', {
    taskId,
    inputResponses: { [inputKey!]: { action: 'accept', content: { decision: 'approve' } } },
  });
  expect(bobUpdate.error).toMatchObject({ code: -32602 });
  expect(wired).not.toContain(amount);

  const update = await modernRequest('alice-secret', 'tasks/update', {
    taskId,
    inputResponses: { [inputKey!]: { action: 'accept', content: { decision: 'approve' } } },
  });
  expect(update.error).toBeUndefined();
  let done: Record<string, unknown> = {};
  await waitFor('the task to complete', async () => {
    done = (await modernRequest('alice-secret', 'tasks/get', { taskId })).result ?? {};
    return done['status'] === 'completed';
  });
  expect(done['result']).toMatchObject({ structuredContent: { wired: amount } });
  expect(wired.filter((a) => a === amount)).toHaveLength(1);
});

test('four eyes on 2026-07-28: a caller who may not approve is not asked; an approver decides, the re-issue gets the result', async () => {
  const asked: unknown[] = [];
  const bob = await mcp.connectModern('bob-secret', { capabilities: { elicitation: { form: {} } } });
  bob.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params);
    return { action: 'accept', content: { decision: 'approve' } };
  });
  const amount = nextAmount();
  const key = unique('bob');
  const call = () => bob.callTool({ name: 'wire', arguments: { amount }, _meta: { idempotencyKey: key } });
  const first = await call();
  expect(JSON.stringify(first.content)).toContain('APPROVAL_REQUIRED');
  expect(asked).toEqual([]);
  const workflowId = mcpCallWorkflowId(key, { caller: { subject: 'token:bob' } });
  // His task shows it working (another approver decides), with no form to answer.
  const task = await modernRequest('bob-secret', 'tasks/get', { taskId: workflowId });
  expect(task.result).toMatchObject({ status: 'working' });
  expect(task.result).not.toHaveProperty('inputRequests');

  const alice = await mcp.connectModern('alice-secret');
  const { digest } = (first._meta as { 'io.durable-tools/approval': { digest: string } })['io.durable-tools/approval'];
  const decided = await alice.callTool({
    name: 'decide_approval',
    arguments: { workflowId, stepId: 1, decision: 'approve', digest },
  });
  expect(decided.isError).toBeFalsy();
  expect((await call()).structuredContent).toEqual({ wired: amount });
  expect(wired.filter((a) => a === amount)).toHaveLength(1);
});

test('`durable-tools mcp --http` answers a 2026-07-28 client and a 2025-11-25 client on its one endpoint', async () => {
  const cli = startCli(['mcp', '--tools', 'test/support/test-tools-module.ts', '--http', '--port', '0'], {
    TEMPORAL_ADDRESS: testServer().address,
    TEMPORAL_NAMESPACE: testServer().namespace,
    DURABLE_TOOLS_MCP_TOKEN: '',
    DURABLE_TOOLS_MCP_TOKENS: 'carol:carol-secret',
    DURABLE_TOOLS_TASK_QUEUE: uniqueTaskQueue('mcp-modern-cli'),
    DURABLE_TOOLS_MCP_STATE_KEY: 'k'.repeat(32),
  });
  const modern = new ModernClient(
    { name: 'cli-2026', version: '1' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  const legacy = new LegacyClient({ name: 'cli-2025', version: '1' });
  try {
    await waitForCliOutput(cli, /MCP server at (http:\S+):/);
    const url = /MCP server at (http:\S+):/.exec(cli.stderr())![1]!;
    await modern.connect(
      new ModernHttpTransport(new URL(url), { requestInit: { headers: { Authorization: 'Bearer carol-secret' } } }),
    );
    const key = unique('cli');
    const call = () => modern.callTool({ name: 'add', arguments: { a: 40, b: 2 }, _meta: { idempotencyKey: key } });
    expect((await call()).structuredContent).toEqual({ sum: 42 });
    expect((await call()).structuredContent).toEqual({ sum: 42 });
    await legacy.connect(
      new LegacyHttpTransport(new URL(url), { requestInit: { headers: { Authorization: 'Bearer carol-secret' } } }),
    );
    expect((await legacy.callTool({ name: 'add', arguments: { a: 1, b: 2 } })).structuredContent).toEqual({ sum: 3 });
    expect(legacy.getServerVersion()?.name).toBeDefined();
  } finally {
    await legacy.close();
    await modern.close();
    process.kill(cli.child.pid!, 'SIGTERM');
    await cli.exited;
  }
});
