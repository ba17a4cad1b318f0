/**
 * Approvals through the MCP server in its OAuth mode, against a real OpenID provider (`oidc-provider`, in its own
 * process): `decide_approval` needs the `approvals` scope (403 insufficient_scope without it); a token with that scope
 * sees every caller's waiting calls and its decision is recorded under the token's subject; a token without it sees
 * only its own; an approver cannot approve its own call. One listener, a worker of a `wire` tool that needs approval.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { argumentsDigest } from '../../src/activities/arguments-digest';
import { getRunStateQuery } from '../../src/contract/agent-run-messages';
import { mcpReadOnlyToolNames } from '../../src/mcp/server/mcp-oauth-scopes';
import { mcpCallWorkflowId } from '../../src/mcp/server/mcp-server';
import { SqliteAuditStore } from '../../src/stores/audit/sqlite-audit-store';
import { createToolRegistry } from '../../src/tools/tool-registry';
import { useMcpTestListener } from '../support/mcp-test-listener';
import { useOidcTestProvider } from '../support/oidc-provider';
import { createWireTool } from '../support/approval-tools';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

const AGENT = 'tools:read tools:write';
const APPROVER = 'tools:read tools:write approvals';
const provider = useOidcTestProvider({
  clients: [
    { id: 'alice', scope: AGENT },
    { id: 'bob', scope: AGENT },
    { id: 'reviewer', scope: APPROVER },
    { id: 'desk', scope: 'approvals' },

    // One person, carol, through two client apps (as a user signed in to both would be).
    { id: 'carol-app1', scope: APPROVER },
    { id: 'carol-app2', scope: APPROVER },
  ],
  subjects: { 'carol-app1': 'carol', 'carol-app2': 'carol' },
});
const auditStore = new SqliteAuditStore({
  path: join(mkdtempSync(join(tmpdir(), 'mcp-oauth-approvals-audit-')), 'audit.sqlite'),
});
const { tool: wire, wired } = createWireTool();
const registry = createToolRegistry([wire]);
const taskQueue = uniqueTaskQueue('mcp-oauth-approvals');
const temporal = useTestTemporal({
  worker: (temporal) => createTestWorker(temporal, { tools: registry.list(), taskQueue, auditStore }),
});
const mcp = useMcpTestListener(temporal, {
  taskQueue,
  catalog: () => registry.catalog(),
  oauth: () => ({ issuer: provider().issuer, scopes: { readOnlyTools: mcpReadOnlyToolNames(registry.catalog()) } }),
});
afterAll(async () => {
  await auditStore.close();
});

const tokenOf = (client: string, scope: string) => provider().token(client, { resource: mcp.listener().url, scope });
const connectAs = async (client: string, scope = AGENT) => mcp.connect(await tokenOf(client, scope));

let amounts = 200;
const unique = (label: string) => `${label}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;

/**
 * `client` (an OAuth client-credentials caller: subject = client id, unless `subject` says whom it acts for) calls
 * `wire`; the call waits for approval.
 */
async function wireWaiting(mcpClient: McpClient, client: string, subject = client) {
  const amount = ++amounts;
  const key = unique('wire');
  const call = () => mcpClient.callTool({ name: 'wire', arguments: { amount }, _meta: { idempotencyKey: key } });
  expect(JSON.stringify((await call()).content)).toContain('APPROVAL_REQUIRED');
  const workflowId = mcpCallWorkflowId(key, { caller: { subject, clientId: client } });
  return { call, amount, workflowId, digest: argumentsDigest({ amount }) };
}

async function listedTo(client: McpClient): Promise<{ workflowId: string; own: boolean; digest: string }[]> {
  const result = await client.callTool({ name: 'list_pending_approvals', arguments: {} });
  expect(result.isError).toBeFalsy();
  return (result.structuredContent as { pending: { workflowId: string; own: boolean; digest: string }[] }).pending;
}

const onceListed = (client: McpClient, workflowId: string) =>
  waitFor(`${workflowId} to be listed`, async () => (await listedTo(client)).find((p) => p.workflowId === workflowId));

test('a token without the approvals scope is answered 403 insufficient_scope naming it for decide_approval', async () => {
  const token = await tokenOf('alice', AGENT);
  const response = await fetch(mcp.listener().url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'decide_approval',
        arguments: { workflowId: 'mcp-call-x', stepId: 1, decision: 'approve', digest: '0'.repeat(64) },
      },
    }),
  });
  expect(response.status).toBe(403);
  const header = response.headers.get('www-authenticate') ?? '';
  expect(header).toMatch(/^Bearer /);
  expect(header).toContain('error="insufficient_scope"');
  expect(header).toContain('scope="approvals"');
});

test("a token with the approvals scope sees another caller's waiting call; one without it does not", async () => {
  const [alice, bob, reviewer] = [
    await connectAs('alice'),
    await connectAs('bob'),
    await connectAs('reviewer', APPROVER),
  ];
  const waiting = await wireWaiting(alice, 'alice');
  expect(await onceListed(reviewer, waiting.workflowId)).toMatchObject({ own: false, digest: waiting.digest });
  expect(await onceListed(alice, waiting.workflowId)).toMatchObject({ own: true });
  expect((await listedTo(bob)).map((p) => p.workflowId)).not.toContain(waiting.workflowId);
});

test("approving with the approvals scope runs the call once and records the token's subject as the approver", async () => {
  const [alice, reviewer] = [await connectAs('alice'), await connectAs('reviewer', APPROVER)];
  const waiting = await wireWaiting(alice, 'alice');
  await onceListed(reviewer, waiting.workflowId);
  const decided = await reviewer.callTool({
    name: 'decide_approval',
    arguments: { workflowId: waiting.workflowId, stepId: 1, decision: 'approve', digest: waiting.digest },
  });
  expect(decided.structuredContent).toMatchObject({ decision: 'approved', approver: 'mcp:reviewer' });
  expect((await waiting.call()).structuredContent).toEqual({ wired: waiting.amount });
  expect(wired.filter((amount) => amount === waiting.amount)).toHaveLength(1);

  const state = await temporal.client.workflow.getHandle(waiting.workflowId).query(getRunStateQuery);
  expect(state.steps[0]?.approval).toMatchObject({ decision: 'approved', decidedBy: 'mcp:reviewer' });
  const [audit] = await waitFor('the audit record to be complete', async () => {
    const records = await auditStore.list({ workflowId: waiting.workflowId });
    return records[0]?.outcome ? records : undefined;
  });
  expect(audit).toMatchObject({ decision: 'approved', decidedBy: 'mcp:reviewer', outcome: 'succeeded' });
});

test('the audit records who approved as subject, client and issuer', async () => {
  const [alice, carol] = [await connectAs('alice'), await connectAs('carol-app1', APPROVER)];
  const waiting = await wireWaiting(alice, 'alice');
  await onceListed(carol, waiting.workflowId);
  const decided = await carol.callTool({
    name: 'decide_approval',
    arguments: { workflowId: waiting.workflowId, stepId: 1, decision: 'approve', digest: waiting.digest },
  });
  expect(decided.structuredContent).toMatchObject({ decision: 'approved', approver: 'mcp:carol (client carol-app1)' });
  const [audit] = await waitFor('the audit record to be decided', async () => {
    const records = await auditStore.list({ workflowId: waiting.workflowId });
    return records[0]?.decision ? records : undefined;
  });
  expect(audit!.decidedByIdentity).toEqual({ subject: 'carol', clientId: 'carol-app1', issuer: provider().issuer });
});

test('carol cannot approve her own call through another client app: four eyes are two people, not two apps', async () => {
  const [throughApp2, throughApp1] = [await connectAs('carol-app2', APPROVER), await connectAs('carol-app1', APPROVER)];
  const waiting = await wireWaiting(throughApp2, 'carol-app2', 'carol');
  expect(await onceListed(throughApp1, waiting.workflowId)).toMatchObject({ own: true, mayApprove: false });
  const refused = await throughApp1.callTool({
    name: 'decide_approval',
    arguments: { workflowId: waiting.workflowId, stepId: 1, decision: 'approve', digest: waiting.digest },
  });
  expect(refused.isError).toBe(true);
  expect(refused._meta?.['io.durable-tools/error']).toMatchObject({ code: 'APPROVAL_SELF_APPROVAL' });
  expect(wired).not.toContain(waiting.amount);
});

test('an approver cannot approve a call it made itself', async () => {
  const reviewer = await connectAs('reviewer', APPROVER);
  const waiting = await wireWaiting(reviewer, 'reviewer');
  const refused = await reviewer.callTool({
    name: 'decide_approval',
    arguments: { workflowId: waiting.workflowId, stepId: 1, decision: 'approve', digest: waiting.digest },
  });
  expect(refused.isError).toBe(true);
  expect(refused._meta?.['io.durable-tools/error']).toMatchObject({ code: 'APPROVAL_SELF_APPROVAL' });
  expect(wired).not.toContain(waiting.amount);
});

test('a token with only the approvals scope lists the calls it may approve, and decides one', async () => {
  const [alice, desk] = [await connectAs('alice'), await connectAs('desk', 'approvals')];
  const waiting = await wireWaiting(alice, 'alice');
  expect(await onceListed(desk, waiting.workflowId)).toMatchObject({ own: false, mayApprove: true });
  const decided = await desk.callTool({
    name: 'decide_approval',
    arguments: { workflowId: waiting.workflowId, stepId: 1, decision: 'approve', digest: waiting.digest },
  });
  expect(decided.isError).toBeFalsy();
  await waitFor('the approved call to run', () => wired.includes(waiting.amount));
});

test('a token with only the approvals scope still may not call a tool nor start a run', async () => {
  const desk = await connectAs('desk', 'approvals');
  await expect(desk.callTool({ name: 'wire', arguments: { amount: 1 } })).rejects.toThrow(
    /needs the scope tools:write/,
  );
  await expect(desk.callTool({ name: 'get_agent_run', arguments: { workflowId: 'x' } })).rejects.toThrow(
    /needs the scope tools:read/,
  );
});
