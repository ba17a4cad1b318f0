/**
 * One agent run uses the tools of two MCP servers of different revisions: a 2026-07-28 server (stateless,
 * `@modelcontextprotocol/server` v2, test/support/mcp-modern-server.ts, with a counting downstream) over Streamable
 * HTTP, and server-everything (2025-11-25, `initialize` and a session) over stdio. The worker's client negotiates
 * each; the HTTP stream of the modern server's call is cut mid-call and the call re-issued with the same
 * idempotency key: one effect at the downstream, and the run gets the first work's result. (The booking tool is
 * not read-only, so it is irreversible and waits for an approval, given here.)
 */
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { MCP_IDEMPOTENCY_KEY_META } from '../../src/mcp/client/mcp-client-pool';
import { createMcpHost, type McpHost } from '../../src/mcp/client/mcp-host';
import { everythingStdio } from '../support/mcp-everything';
import { startModernMcpServer, type ModernMcpServer } from '../support/mcp-modern-server';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { approveWhenPending } from '../support/approval-runs';

let modern: ModernMcpServer;
let host: McpHost;
const taskQueue = uniqueTaskQueue('mcp-revisions');

const temporal = useTestTemporal({
  worker: async (temporal) => {
    modern = await startModernMcpServer();
    host = createMcpHost(
      { mcpServers: { modern: { url: modern.url, trust: 'trusted' }, everything: everythingStdio('trusted') } },
      { warn: () => {} },
    );
    return createTestWorker(temporal, { tools: [], taskQueue, mcp: host });
  },
});
afterAll(async () => {
  await host?.close();
  await modern?.stop();
});

test('a run uses a 2026-07-28 server and a 2025-11-25 server; a call whose stream is cut is re-issued with its key: one effect', async () => {
  const handle = await startAgentRun(
    temporal.client,
    {
      goal: 'book a room and add two numbers',
      model: {
        provider: 'scripted',
        script: [
          { toolCalls: [{ name: 'modern__book', arguments: { item: 'room', cut: true } }] },
          { toolCalls: [{ name: 'everything__get-sum', arguments: { a: 2, b: 40 } }] },
          { text: 'done', final: true },
        ],
      },
    },
    { taskQueue },
  );
  // An MCP tool that is not read-only is irreversible (no undo tool): it waits for a person's approval.
  await approveWhenPending(temporal.client, handle.workflowId, 'the booking');
  const result = await waitForAgentRun(handle);

  expect(result.status).toBe('completed');
  expect(result.steps.map((step) => step.observation)).toEqual([
    { status: 'ok', output: { content: [{ type: 'text', text: expect.stringMatching(/^booked room #\d+$/) }] } },
    { status: 'ok', output: { content: [{ type: 'text', text: 'The sum of 2 and 40 is 42.' }] } },
  ]);

  // Each server speaks its own revision with the same client.
  expect(await host.pool.connectionInfo('modern')).toEqual({ era: 'modern', protocolVersion: '2026-07-28' });
  expect(await host.pool.connectionInfo('everything')).toEqual({ era: 'legacy', protocolVersion: '2025-11-25' });
  expect(modern.methods).not.toContain('initialize');

  // The cut call went twice with one key; the downstream did the work once.
  const books = modern.calls.filter((call) => call.tool === 'book');
  expect(books).toHaveLength(2);
  const key = books[0]!.meta[MCP_IDEMPOTENCY_KEY_META] as string;
  expect(key).toContain(handle.workflowId);
  expect(books[1]!.meta[MCP_IDEMPOTENCY_KEY_META]).toBe(key);
  expect(modern.cuts).toEqual([key]);
  expect(modern.effects.get(key)).toBe(1);
  expect(books.map((call) => call.protocolVersion)).toEqual(['2026-07-28', '2026-07-28']);
});
