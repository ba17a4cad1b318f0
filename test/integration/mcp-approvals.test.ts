/**
 * Approvals decided through the MCP server (static tokens): `list_pending_approvals` shows a waiting call to its
 * caller and to an approver, never to another caller; `decide_approval` runs it once and records the approver's
 * authenticated name in the run's state and the audit store; a stale digest, a caller who is not an approver, and an
 * approver approving its own call are refused. One listener with three named tokens (carol is the approver), a worker
 * of a `wire` tool that needs approval, SDK clients over Streamable HTTP.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { argumentsDigest } from '../../src/activities/arguments-digest';
import { getRunStateQuery } from '../../src/contract/agent-run-messages';
import { mcpApproversByName } from '../../src/mcp/server/mcp-approver-rules';
import { createDurableMcpServer, mcpCallWorkflowId } from '../../src/mcp/server/mcp-server';
import { SqliteAuditStore } from '../../src/stores/audit/sqlite-audit-store';
import { createToolRegistry } from '../../src/tools/tool-registry';
import { runCliToEnd } from '../support/cli-process';
import { useMcpTestListener } from '../support/mcp-test-listener';
import { createWireTool } from '../support/approval-tools';
import { createTestWorker, testServer, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

const ALICE = { subject: 'token:alice' };
const CAROL = { subject: 'token:carol' };
const TOKENS = [
  { name: 'alice', token: 'alice-secret' },
  { name: 'bob', token: 'bob-secret' },
  { name: 'carol', token: 'carol-secret' },
];

const auditStore = new SqliteAuditStore({
  path: join(mkdtempSync(join(tmpdir(), 'mcp-approvals-audit-')), 'audit.sqlite'),
});
const { tool: wire, wired } = createWireTool();
const registry = createToolRegistry([wire]);
const taskQueue = uniqueTaskQueue('mcp-approvals');
const temporal = useTestTemporal({
  worker: (temporal) => createTestWorker(temporal, { tools: registry.list(), taskQueue, auditStore }),
});
const approvals = { approvers: mcpApproversByName(['carol']) };
const mcp = useMcpTestListener(temporal, { taskQueue, catalog: () => registry.catalog(), tokens: TOKENS, approvals });
afterAll(async () => {
  await auditStore.close();
});

/** A waiting call as `list_pending_approvals` shows it. */
interface Listed {
  workflowId: string;
  stepId: number;
  tool: string;
  arguments: unknown;
  digest: string;
  own: boolean;
  mayApprove: boolean;
}

let amounts = 100;
/** A new amount, so each test's call is told apart by its arguments too. */
const nextAmount = () => ++amounts;
const unique = (label: string) => `${label}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;

/** `caller` calls `wire` with a new key; the call answers APPROVAL_REQUIRED and waits. */
async function wireWaiting(client: McpClient, by: { subject: string }, amount = nextAmount()) {
  const key = unique('wire');
  const call = () => client.callTool({ name: 'wire', arguments: { amount }, _meta: { idempotencyKey: key } });
  const first = await call();
  expect(JSON.stringify(first.content)).toContain('APPROVAL_REQUIRED');
  return { call, amount, workflowId: mcpCallWorkflowId(key, { caller: by }), digest: argumentsDigest({ amount }) };
}

async function listedTo(client: McpClient): Promise<Listed[]> {
  const result = await client.callTool({ name: 'list_pending_approvals', arguments: {} });
  expect(result.isError).toBeFalsy();
  return (result.structuredContent as { pending: Listed[] }).pending;
}

/** The listing of `client` once it shows `workflowId` (visibility lags a little behind). */
const onceListed = (client: McpClient, workflowId: string) =>
  waitFor(`${workflowId} to be listed`, async () => (await listedTo(client)).find((p) => p.workflowId === workflowId));

function decide(client: McpClient, args: Record<string, unknown>) {
  return client.callTool({ name: 'decide_approval', arguments: args });
}

const textOf = (result: Record<string, unknown>) => JSON.stringify(result['content']);

describe('who sees a waiting call', () => {
  test('its caller sees it as its own, without the right to approve it', async () => {
    const alice = await mcp.connect('alice-secret');
    const waiting = await wireWaiting(alice, ALICE);
    expect(await onceListed(alice, waiting.workflowId)).toEqual(
      expect.objectContaining({
        stepId: 1,
        tool: 'wire',
        arguments: { amount: waiting.amount },
        digest: waiting.digest,
        own: true,
        mayApprove: false,
      }),
    );
  });

  test("an approver sees another caller's call, and may approve it", async () => {
    const [alice, carol] = [await mcp.connect('alice-secret'), await mcp.connect('carol-secret')];
    const waiting = await wireWaiting(alice, ALICE);
    expect(await onceListed(carol, waiting.workflowId)).toMatchObject({ own: false, mayApprove: true });
  });

  test('another caller who is not an approver does not see it', async () => {
    const [alice, bob, carol] = await Promise.all(TOKENS.map((t) => mcp.connect(t.token)));
    const waiting = await wireWaiting(alice!, ALICE);
    // Once the approver sees it, visibility has caught up: bob's listing is not merely behind.
    await onceListed(carol!, waiting.workflowId);
    expect((await listedTo(bob!)).map((p) => p.workflowId)).not.toContain(waiting.workflowId);
  });
});

describe('a step of an agent run started through MCP', () => {
  test('waits in the list of its starter and of an approver, not of another caller; approved, the run goes on', async () => {
    const [alice, bob, carol] = await Promise.all(TOKENS.map((t) => mcp.connect(t.token)));
    const amount = nextAmount();
    const started = await alice!.callTool({
      name: 'start_agent_run',
      arguments: {
        goal: 'Wire the deposit',
        model: {
          provider: 'scripted',
          script: [{ toolCalls: [{ name: 'wire', arguments: { amount } }] }, { text: 'Wired.', final: true }],
        },
        allowedTools: ['wire'],
      },
    });
    const { runId } = started.structuredContent as { runId: string };
    const listed = await onceListed(carol!, runId);
    expect(listed).toMatchObject({ tool: 'wire', arguments: { amount }, own: false, mayApprove: true });
    expect(await onceListed(alice!, runId)).toMatchObject({ own: true, mayApprove: false });
    expect((await listedTo(bob!)).map((p) => p.workflowId)).not.toContain(runId);

    const decided = await decide(carol!, {
      workflowId: runId,
      stepId: listed.stepId,
      decision: 'approve',
      digest: listed.digest,
    });
    expect(decided.structuredContent).toMatchObject({ decision: 'approved', approver: 'mcp:token:carol' });
    const state = await waitFor('the run to complete', async () => {
      const read = await alice!.callTool({ name: 'get_agent_run', arguments: { runId } });
      const run = read.structuredContent as { status: string; steps: { approval?: { decidedBy?: string } }[] };
      return run.status === 'completed' ? run : undefined;
    });
    expect(state.steps[0]?.approval?.decidedBy).toBe('mcp:token:carol');
    expect(wired.filter((a) => a === amount)).toHaveLength(1);
  });
});

describe('deciding through MCP', () => {
  test("approving runs the call once and records the approver's subject in the run's state and the audit store", async () => {
    const [alice, carol] = [await mcp.connect('alice-secret'), await mcp.connect('carol-secret')];
    const waiting = await wireWaiting(alice, ALICE);
    const listed = await onceListed(carol, waiting.workflowId);

    const decided = await decide(carol, {
      workflowId: listed.workflowId,
      stepId: listed.stepId,
      decision: 'approve',
      digest: listed.digest,
      reason: 'checked',
    });
    expect(decided.isError).toBeFalsy();
    expect(decided.structuredContent).toMatchObject({
      workflowId: waiting.workflowId,
      stepId: 1,
      tool: 'wire',
      decision: 'approved',
      approver: 'mcp:token:carol',
      digest: waiting.digest,
    });
    // The whole answer, so that a failure shows what came back instead.
    expect(await waiting.call()).toMatchObject({ structuredContent: { wired: waiting.amount } });
    expect(await waiting.call()).toMatchObject({ structuredContent: { wired: waiting.amount } });
    expect(wired.filter((amount) => amount === waiting.amount)).toHaveLength(1);

    const state = await temporal.client.workflow.getHandle(waiting.workflowId).query(getRunStateQuery);
    expect(state.steps[0]?.approval).toMatchObject({ decision: 'approved', decidedBy: 'mcp:token:carol' });
    const [audit] = await waitFor('the audit record to be complete', async () => {
      const records = await auditStore.list({ workflowId: waiting.workflowId });
      return records[0]?.outcome ? records : undefined;
    });
    expect(audit).toMatchObject({
      tool: 'wire',
      argumentsDigest: waiting.digest,
      decision: 'approved',
      decidedBy: 'mcp:token:carol',
      reason: 'checked',
      outcome: 'succeeded',
    });
  });

  test('rejecting needs a reason, and the rejected call never runs', async () => {
    const [alice, carol] = [await mcp.connect('alice-secret'), await mcp.connect('carol-secret')];
    const waiting = await wireWaiting(alice, ALICE);
    const decision = { workflowId: waiting.workflowId, stepId: 1, decision: 'reject', digest: waiting.digest };
    const noReason = await decide(carol, decision);
    expect(noReason.isError).toBe(true);
    expect(textOf(noReason)).toContain('INVALID_ARGUMENTS');

    const rejected = await decide(carol, { ...decision, reason: 'not this month' });
    expect(rejected.structuredContent).toMatchObject({ decision: 'rejected', approver: 'mcp:token:carol' });
    const answer = await waiting.call();
    expect(answer.isError).toBe(true);
    expect(textOf(answer)).toContain('not this month');
    expect(wired).not.toContain(waiting.amount);
  });

  test('a decision with a stale digest is refused and the call keeps waiting', async () => {
    const [alice, carol] = [await mcp.connect('alice-secret'), await mcp.connect('carol-secret')];
    const waiting = await wireWaiting(alice, ALICE);
    const stale = argumentsDigest({ amount: waiting.amount + 1 });
    const refused = await decide(carol, {
      workflowId: waiting.workflowId,
      stepId: 1,
      decision: 'approve',
      digest: stale,
    });
    expect(refused.isError).toBe(true);
    expect(refused._meta?.['io.durable-tools/error']).toMatchObject({ code: 'APPROVAL_DIGEST_MISMATCH' });
    expect(await onceListed(carol, waiting.workflowId)).toMatchObject({ digest: waiting.digest });
    expect(wired).not.toContain(waiting.amount);
  });

  test('an approver cannot approve its own call by default, but may reject it', async () => {
    const carol = await mcp.connect('carol-secret');
    const waiting = await wireWaiting(carol, CAROL);
    const decision = { workflowId: waiting.workflowId, stepId: 1, digest: waiting.digest };
    const approved = await decide(carol, { ...decision, decision: 'approve' });
    expect(approved.isError).toBe(true);
    expect(approved._meta?.['io.durable-tools/error']).toMatchObject({ code: 'APPROVAL_SELF_APPROVAL' });
    expect(await onceListed(carol, waiting.workflowId)).toMatchObject({ own: true, mayApprove: false });

    const rejected = await decide(carol, { ...decision, decision: 'reject', reason: 'changed my mind' });
    expect(rejected.structuredContent).toMatchObject({ decision: 'rejected', approver: 'mcp:token:carol' });
    expect(wired).not.toContain(waiting.amount);
  });

  test('a server configured for self-approval lets an approver approve its own call', async () => {
    const server = createDurableMcpServer({
      client: temporal.client,
      taskQueue,
      catalog: registry.catalog(),
      caller: CAROL,
      approvals: { ...approvals, allowSelfApproval: true },
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const carol = new McpClient({ name: 'test', version: '1' });
    await carol.connect(clientSide);
    mcp.track(carol);
    const waiting = await wireWaiting(carol, CAROL);
    const approved = await decide(carol, {
      workflowId: waiting.workflowId,
      stepId: 1,
      decision: 'approve',
      digest: waiting.digest,
    });
    expect(approved.structuredContent).toMatchObject({ decision: 'approved', approver: 'mcp:token:carol' });
    // The whole answer, so that a failure shows what came back instead.
    expect(await waiting.call()).toMatchObject({ structuredContent: { wired: waiting.amount } });
  });

  test('a caller who is not an approver cannot decide its own call', async () => {
    const alice = await mcp.connect('alice-secret');
    const waiting = await wireWaiting(alice, ALICE);
    const refused = await decide(alice, {
      workflowId: waiting.workflowId,
      stepId: 1,
      decision: 'approve',
      digest: waiting.digest,
    });
    expect(refused._meta?.['io.durable-tools/error']).toMatchObject({ code: 'APPROVAL_NOT_APPROVER' });
    expect(wired).not.toContain(waiting.amount);
  });

  test("another caller's call is answered as unknown, like a call that does not exist", async () => {
    const [alice, bob] = [await mcp.connect('alice-secret'), await mcp.connect('bob-secret')];
    const waiting = await wireWaiting(alice, ALICE);
    const decision = { stepId: 1, decision: 'approve', digest: waiting.digest };
    const stranger = await decide(bob, { ...decision, workflowId: waiting.workflowId });
    const unknown = await decide(bob, { ...decision, workflowId: 'mcp-call-does-not-exist' });
    expect(stranger._meta?.['io.durable-tools/error']).toMatchObject({ code: 'NOT_FOUND' });
    expect(textOf(stranger).replace(waiting.workflowId, 'ID')).toBe(
      textOf(unknown).replace('mcp-call-does-not-exist', 'ID'),
    );
  });
});

test('`durable-tools mcp` with DURABLE_TOOLS_MCP_APPROVERS naming no token of DURABLE_TOOLS_MCP_TOKENS exits 2', async () => {
  const { code, stderr } = await runCliToEnd(
    ['mcp', '--tools', 'test/support/test-tools-module.ts', '--http', '--port', '0', '--no-worker'],
    {
      TEMPORAL_ADDRESS: testServer().address,
      TEMPORAL_NAMESPACE: testServer().namespace,
      DURABLE_TOOLS_MCP_TOKEN: '',
      DURABLE_TOOLS_MCP_TOKENS: 'alice:alice-secret,carol:carol-secret',
      DURABLE_TOOLS_MCP_APPROVERS: 'carol,mallory',
    },
  );
  expect(code).toBe(2);
  expect(stderr).toContain('"mallory"');
});

describe('approve with edits over MCP', () => {
  test('decide_approval with arguments runs the edited call once, and the audit keeps both', async () => {
    const [alice, carol] = [await mcp.connect('alice-secret'), await mcp.connect('carol-secret')];
    const waiting = await wireWaiting(alice, ALICE);
    const listed = await onceListed(carol, waiting.workflowId);
    const edited = { amount: waiting.amount + 1000 };

    const decided = await decide(carol, {
      workflowId: listed.workflowId,
      stepId: listed.stepId,
      decision: 'approve',
      digest: listed.digest,
      arguments: edited,
    });
    expect(decided.structuredContent).toMatchObject({ decision: 'approved', editedDigest: argumentsDigest(edited) });
    expect(await waiting.call()).toMatchObject({ structuredContent: { wired: edited.amount } });
    expect(wired.filter((amount) => amount === edited.amount)).toHaveLength(1);
    expect(wired).not.toContain(waiting.amount);

    const [audit] = await waitFor('the audit record to be complete', async () => {
      const records = await auditStore.list({ workflowId: waiting.workflowId });
      return records[0]?.outcome ? records : undefined;
    });
    expect(audit).toMatchObject({
      arguments: { amount: waiting.amount },
      argumentsDigest: waiting.digest,
      editedArguments: edited,
      editedArgumentsDigest: argumentsDigest(edited),
      outcome: 'succeeded',
    });
  });
});
