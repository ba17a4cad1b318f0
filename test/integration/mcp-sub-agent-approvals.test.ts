/**
 * A sub-agent's waiting call through the MCP approval tools: an agent tool called over MCP starts a child run whose
 * call waits for approval; the child (its own workflow id, rooted at the caller's MCP call) is listed to the caller
 * and to an approver, not to another caller, and the approver decides it at the child's id. Static tokens, carol the
 * approver; the sub-agent tools of the sub-agent tests with their ledger.
 */
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { mcpApproversByName } from '../../src/mcp/server/mcp-approver-rules';
import { mcpCallWorkflowId } from '../../src/mcp/server/mcp-server';
import { useSubAgentMcpServer } from '../support/sub-agent-mcp-server';
import { waitFor } from '../support/wait-for';

const { mcp, ledger } = useSubAgentMcpServer('mcp-sub-agent-approvals', {
  tokens: [
    { name: 'alice', token: 'alice-secret' },
    { name: 'bob', token: 'bob-secret' },
    { name: 'carol', token: 'carol-secret' },
  ],
  approvals: { approvers: mcpApproversByName(['carol']) },
});

interface Listed {
  workflowId: string;
  stepId: number;
  tool: string;
  digest: string;
  parent?: { workflowId: string; stepId: number };
  own: boolean;
}

async function listedTo(client: McpClient): Promise<Listed[]> {
  const result = await client.callTool({ name: 'list_pending_approvals', arguments: {} });
  return (result.structuredContent as { pending: Listed[] }).pending;
}

test("a sub-agent's waiting call is listed to the caller and to an approver, not to another caller, and decided at the child's id", async () => {
  const [alice, bob, carol] = [
    await mcp.connect('alice-secret'),
    await mcp.connect('bob-secret'),
    await mcp.connect('carol-secret'),
  ];
  const key = `hotel-${Date.now()}`;
  const call = () =>
    alice.callTool({ name: 'hotel_agent', arguments: { city: 'Quito' }, _meta: { idempotencyKey: key } });
  const root = mcpCallWorkflowId(key, { caller: { subject: 'token:alice' } });
  expect(JSON.stringify((await call()).content)).toContain('APPROVAL_REQUIRED');

  const listed = await waitFor('the child call to be listed to the approver', async () =>
    (await listedTo(carol)).find((p) => p.parent?.workflowId === root),
  );
  expect(listed).toMatchObject({ tool: 'book_hotel', own: false, parent: { workflowId: root, stepId: 1 } });
  expect(listed.workflowId).not.toBe(root);
  expect((await listedTo(alice)).find((p) => p.workflowId === listed.workflowId)).toMatchObject({ own: true });
  expect((await listedTo(bob)).map((p) => p.workflowId)).not.toContain(listed.workflowId);

  const decided = await carol.callTool({
    name: 'decide_approval',
    arguments: { workflowId: listed.workflowId, stepId: listed.stepId, decision: 'approve', digest: listed.digest },
  });
  expect(decided.structuredContent).toMatchObject({ decision: 'approved', approver: 'mcp:token:carol' });
  const answer = await waitFor('the call to finish', async () => {
    const again = await call();
    return again.isError ? undefined : again;
  });
  expect(answer.structuredContent).toMatchObject({ answer: 'Hotel in Quito booked.' });
  expect(ledger().effects.filter((e) => e.key.startsWith(`${root}/`) && e.kind === 'book')).toHaveLength(1);
});
