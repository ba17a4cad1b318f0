import { approveStep, getPendingApprovals } from '../../src/client/approval-client';
import { MCP_IDEMPOTENCY_KEY_META } from '../../src/mcp/client/mcp-client-pool';
import { mcpCallWorkflowId } from '../../src/mcp/server/mcp-server';
import { useSubAgentMcpServer } from '../support/sub-agent-mcp-server';
import { waitFor } from '../support/wait-for';

/**
 * An agent tool called over our MCP server (issue 24, part 2): the call's child run waits for approval, the MCP
 * answer says so at once (naming the child to decide), and once decided the same key returns the child's answer.
 */

const { temporal, mcp, ledger } = useSubAgentMcpServer('sub-agents-mcp', {
  tokens: [{ name: 'default', token: 'test-token' }],
});

test("an agent tool over MCP answers APPROVAL_REQUIRED for its child's call; decided, the same key returns the answer", async () => {
  const client = await mcp.connect('test-token');
  const key = `hotel-${Date.now()}`;
  const call = () =>
    client.callTool({ name: 'hotel_agent', arguments: { city: 'Lima' }, _meta: { [MCP_IDEMPOTENCY_KEY_META]: key } });
  const workflowId = mcpCallWorkflowId(key, { caller: { subject: 'token:default' } });

  const first = await call();
  expect(first.isError).toBe(true);
  const text = JSON.stringify(first.content);
  expect(text).toContain('APPROVAL_REQUIRED: \\"book_hotel\\" needs a human approval');
  expect(text).toContain(`a sub-agent of ${workflowId}`);
  const [pending] = await getPendingApprovals(temporal.client, workflowId);
  expect(pending).toMatchObject({ tool: 'book_hotel', parent: { workflowId, stepId: 1 } });
  expect(text).toContain(`durable-tools approve ${pending!.workflowId} 1 --digest ${pending!.digest}`);

  await approveStep(temporal.client, pending!.workflowId, { stepId: 1, digest: pending!.digest, approver: 'alice' });
  const second = await waitFor('the call to finish', async () => {
    const again = await call();
    return again.isError ? undefined : again;
  });
  expect(second.structuredContent).toMatchObject({ answer: 'Hotel in Lima booked.' });
  expect(ledger().effects.filter((e) => e.key.startsWith(`${workflowId}/`) && e.kind === 'book')).toHaveLength(1);
  await client.close();
});
