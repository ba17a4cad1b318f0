/**
 * Issue 44.1, "authority travels with the run", on the real dev server against a real OpenID provider
 * (`oidc-provider`, loopback): the MCP server gives every call and run it starts a grant (what its caller asked for
 * and may call: `raw_effect` needs the scope `admin`), recorded in the worker's store; the worker restricts
 * `raw_effect`, and its tool activity refuses any call outside the run's grant with `TOOL_NOT_PERMITTED`. Effects are
 * counted at a counting downstream.
 */
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import type { AgentRunResult } from '../../src/contract/agent-run-types';
import { mcpReadOnlyToolNames } from '../../src/mcp/server/mcp-oauth-scopes';
import { MemoryAuditStore } from '../../src/stores/audit/memory-audit-store';
import { createToolRegistry } from '../../src/tools/tool-registry';
import { authorityTools, rawEffectScript } from '../support/authority-tools';
import { startCountingHttpServer, type CountingHttpServer } from '../support/counting-http-server';
import { useMcpTestListener } from '../support/mcp-test-listener';
import { useOidcTestProvider } from '../support/oidc-provider';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';

const AGENT = 'tools:read tools:write';
const ADMIN = 'tools:read tools:write admin';
const provider = useOidcTestProvider({
  clients: [
    { id: 'agent-app', scope: AGENT },
    { id: 'admin-app', scope: ADMIN },
  ],
});
let downstream: CountingHttpServer;
let registry: ReturnType<typeof createToolRegistry>;
/** The worker's audit store, which keeps the grants: the MCP server records them, the tool activity reads them. */
const store = new MemoryAuditStore();
const taskQueue = uniqueTaskQueue('run-authority');
const temporal = useTestTemporal({
  worker: async (t) => {
    downstream = await startCountingHttpServer(() => ({ status: 200, body: {} }));
    registry = createToolRegistry(authorityTools(downstream.url));
    return createTestWorker(t, {
      tools: registry.list(),
      taskQueue,
      auditStore: store,
      authority: { restrictedTools: ['raw_effect'] },
    });
  },
});
const scopes = () => ({ readOnlyTools: mcpReadOnlyToolNames(registry.catalog()), perTool: { raw_effect: ['admin'] } });
const mcp = useMcpTestListener(temporal, {
  taskQueue,
  catalog: () => registry.catalog(),
  oauth: () => ({ issuer: provider().issuer, scopes: scopes() }),
  authority: {
    grants: store,
    get scopes() {
      return scopes();
    },
  },
});
afterAll(async () => {
  await downstream.close();
});

const connectAs = async (client: string, scope: string) =>
  mcp.connect(await provider().token(client, { resource: mcp.listener().url, scope }));
/** The downstream's effects of one run (its keys start with the run's workflow id). */
const effectsOf = (workflowId: string) =>
  downstream.calls.filter((c) => decodeURIComponent(c.path).includes(`key=${workflowId}/`));

async function startRun(client: McpClient, allowedTools: string[], script: unknown[]): Promise<AgentRunResult> {
  const started = await client.callTool({
    name: 'start_agent_run',
    arguments: { goal: 'Make the effect', model: { provider: 'scripted', script }, allowedTools },
  });
  expect(started.isError).toBeFalsy();
  const { workflowId } = started.structuredContent as { workflowId: string };
  return waitForAgentRun(temporal.client.workflow.getHandle(workflowId));
}

const childOf = (run: AgentRunResult) =>
  waitForAgentRun(temporal.client.workflow.getHandle(run.steps[0]!.childWorkflowId!));

test('tools/call of raw_effect without the admin scope is refused at the door (403) and makes no effect', async () => {
  const agent = await connectAs('agent-app', AGENT);
  await expect(agent.callTool({ name: 'raw_effect', arguments: { note: 'door' } })).rejects.toThrow(
    /needs the scope admin/,
  );
  expect(downstream.calls.filter((c) => c.path.includes('note=door'))).toEqual([]);
});

test('tools/call of raw_effect with the admin scope runs it once: the call carries its grant to the tool activity', async () => {
  const admin = await connectAs('admin-app', ADMIN);
  const result = await admin.callTool({ name: 'raw_effect', arguments: { note: 'admin-door' } });
  expect(result.structuredContent).toEqual({ done: true });
  expect(downstream.calls.filter((c) => c.path.includes('note=admin-door'))).toHaveLength(1);
});

test('2026-07-28 (stateless): raw_effect without the admin scope is refused at the door, with it it runs once', async () => {
  const agent = await mcp.connectModern(
    await provider().token('agent-app', { resource: mcp.listener().url, scope: AGENT }),
  );
  await expect(agent.callTool({ name: 'raw_effect', arguments: { note: 'modern-door' } })).rejects.toThrow(/403|admin/);
  expect(downstream.calls.filter((c) => c.path.includes('note=modern-door'))).toEqual([]);

  const admin = await mcp.connectModern(
    await provider().token('admin-app', { resource: mcp.listener().url, scope: ADMIN }),
  );
  const result = await admin.callTool({ name: 'raw_effect', arguments: { note: 'modern-admin' } });
  expect(result.structuredContent).toEqual({ done: true });
  expect(downstream.calls.filter((c) => c.path.includes('note=modern-admin'))).toHaveLength(1);
});

test('2026-07-28: an agent run started without the admin scope is refused raw_effect (TOOL_NOT_PERMITTED), no effect', async () => {
  const agent = await mcp.connectModern(
    await provider().token('agent-app', { resource: mcp.listener().url, scope: AGENT }),
  );
  const started = await agent.callTool({
    name: 'start_agent_run',
    arguments: {
      goal: 'Make the effect',
      model: { provider: 'scripted', script: rawEffectScript('modern-bypass') },
      allowedTools: ['raw_effect'],
    },
  });
  expect(started.isError).toBeFalsy();
  const { workflowId } = started.structuredContent as { workflowId: string };
  const run = await waitForAgentRun(temporal.client.workflow.getHandle(workflowId));
  expect(run.steps[0]!.observation).toMatchObject({ status: 'error', code: 'TOOL_NOT_PERMITTED' });
  expect(effectsOf(run.workflowId)).toEqual([]);
});

test('an agent run started without the admin scope is refused raw_effect by the tool activity: TOOL_NOT_PERMITTED, no effect', async () => {
  const agent = await connectAs('agent-app', AGENT);
  const run = await startRun(agent, ['raw_effect'], rawEffectScript('bypass'));
  expect(run.steps[0]).toMatchObject({ tool: 'raw_effect', status: 'failed' });
  expect(run.steps[0]!.observation).toMatchObject({ status: 'error', code: 'TOOL_NOT_PERMITTED' });
  expect(effectsOf(run.workflowId)).toEqual([]);
});

test('the same run started with the admin scope makes its effect once', async () => {
  const admin = await connectAs('admin-app', ADMIN);
  const run = await startRun(admin, ['raw_effect'], rawEffectScript('granted'));
  expect(run.steps[0]).toMatchObject({ tool: 'raw_effect', status: 'succeeded' });
  expect(effectsOf(run.workflowId)).toHaveLength(1);
});

test('a sub-agent of a run started without the admin scope is refused raw_effect: TOOL_NOT_PERMITTED, no effect', async () => {
  const agent = await connectAs('agent-app', AGENT);
  const script = [
    { toolCalls: [{ name: 'helper', arguments: { task: 'sub', times: 3 } }] },
    { text: 'ok', final: true },
  ];
  const run = await startRun(agent, ['helper', 'raw_effect'], script);
  const child = await childOf(run);
  expect(child.steps.map((s) => s.observation)).toEqual(
    Array.from({ length: 3 }, () => expect.objectContaining({ code: 'TOOL_NOT_PERMITTED' })),
  );
  expect(effectsOf(run.workflowId)).toEqual([]);
});

test("a sub-agent is bounded by its parent's tools: an admin's run of allowedTools [helper] cannot have its child call raw_effect", async () => {
  const admin = await connectAs('admin-app', ADMIN);
  const script = [
    { toolCalls: [{ name: 'helper', arguments: { task: 'sub', times: 2 } }] },
    { text: 'ok', final: true },
  ];
  const run = await startRun(admin, ['helper'], script);
  const child = await childOf(run);
  expect(child.steps).toHaveLength(2);
  for (const step of child.steps) expect(step.observation).toMatchObject({ code: 'TOOL_NOT_PERMITTED' });
  expect(effectsOf(run.workflowId)).toEqual([]);
});

test("a sub-agent of a run started from code, without a grant, is bounded by the run's allowedTools", async () => {
  const script = [
    { toolCalls: [{ name: 'helper', arguments: { task: 'code', times: 1 } }] },
    { text: 'ok', final: true },
  ];
  const handle = await startAgentRun(
    temporal.client,
    { goal: 'Help', model: { provider: 'scripted', script }, allowedTools: ['helper'] },
    { taskQueue },
  );
  const run = await waitForAgentRun(handle);
  const child = await childOf(run);
  expect(child.steps[0]!.observation).toMatchObject({ code: 'TOOL_NOT_PERMITTED' });
  expect(await store.grantOf(run.steps[0]!.childWorkflowId!)).toMatchObject({
    tools: [],
    parentWorkflowId: run.workflowId,
  });
  expect(effectsOf(run.workflowId)).toEqual([]);
});

test("the run records its grant: the worker's store holds the tools it may call, and its history its memo's starter", async () => {
  const agent = await connectAs('agent-app', AGENT);
  const run = await startRun(agent, ['helper', 'raw_effect'], [{ text: 'Nothing to do.', final: true }]);
  expect(await store.grantOf(run.workflowId)).toMatchObject({
    tools: ['helper'],
    holder: { subject: 'agent-app', clientId: 'agent-app', issuer: provider().issuer },
  });
  const { memo } = await temporal.client.workflow.getHandle(run.workflowId).describe();
  expect(memo?.['startedBy']).toEqual({ subject: 'agent-app', clientId: 'agent-app', issuer: provider().issuer });
  expect(memo?.['grantedTools']).toEqual(['helper']);
});
