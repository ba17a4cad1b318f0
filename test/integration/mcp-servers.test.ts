/**
 * Two `durable-tools mcp --http` servers of different tools in one namespace, as a user starts them (real processes,
 * each with its own worker, no task queue configured): each answers only its own calls, the same key on both meets
 * nothing, and a call that needed an approval lands in the audit trail the worker writes (the store `durable-tools
 * worker` uses, here a SQLite file per server).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { approveStep, listPendingApprovals } from '../../src/client/approval-client';
import { SqliteAuditStore } from '../../src/stores/audit/sqlite-audit-store';
import { startCli, runCliToEnd, type CliProcess } from '../support/cli-process';
import { keyEntry } from '../support/encryption-keys';
import { runKeyOf } from '../support/run-key';
import { useTestTemporal, testServer } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

interface McpServerProcess {
  cli: CliProcess;
  url: string;
  taskQueue: string;
  auditPath: string;
  client: McpClient;
}

const STARTED = /MCP server at (http:\S+): \d+ tools, server "[^"]+" on task queue "([^"]+)"/;
const temporal = useTestTemporal();
let first: McpServerProcess;
let second: McpServerProcess;

/** The environment of a server process: the test server, its own stores, no task queue and no token. */
function serverEnv(dir: string): NodeJS.ProcessEnv {
  return {
    TEMPORAL_ADDRESS: testServer().address,
    TEMPORAL_NAMESPACE: testServer().namespace,
    TEMPORAL_CONFIG_FILE: join(dir, 'no-temporal.toml'),
    DURABLE_TOOLS_TASK_QUEUE: '',
    DURABLE_TOOLS_MCP_TOKEN: '',
    DURABLE_TOOLS_MCP_TOKENS: '',
    DURABLE_TOOLS_SQLITE_PATH: join(dir, 'keys.sqlite'),
    DURABLE_TOOLS_TRANSCRIPT_SQLITE_PATH: join(dir, 'transcripts.sqlite'),
    DURABLE_TOOLS_AUDIT_STORE: 'sqlite',
    DURABLE_TOOLS_AUDIT_SQLITE_PATH: join(dir, 'audit.sqlite'),
  };
}

async function startServer(toolsModule: string): Promise<McpServerProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'dt-mcp-servers-'));
  const cli = startCli(['mcp', '--tools', toolsModule, '--http', '--port', '0'], serverEnv(dir));
  let exited: number | undefined;
  void cli.exited.then((code) => (exited = code));
  const [, url, taskQueue] = await waitFor(
    'the MCP server to be listening',
    () => {
      if (exited !== undefined) throw new Error(`exited ${exited}:\n${cli.stderr()}`);
      return STARTED.exec(cli.stderr()) ?? undefined;
    },
    { timeoutMs: 240_000 },
  );
  const client = new McpClient({ name: 'test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url!)));
  return { cli, url: url!, taskQueue: taskQueue!, auditPath: join(dir, 'audit.sqlite'), client };
}

async function stop(server: McpServerProcess | undefined): Promise<void> {
  if (!server) return;
  await server.client.close().catch(() => {});
  process.kill(-server.cli.child.pid!, 'SIGTERM');
  await server.cli.exited;
}

beforeAll(async () => {
  [first, second] = await Promise.all([
    startServer('test/support/test-tools-module.ts'),
    startServer('test/support/mcp-second-tools-module.ts'),
  ]);
}, 300_000);
afterAll(async () => {
  await Promise.all([stop(first), stop(second)]);
});

describe('two durable-tools mcp servers in one namespace', () => {
  test('each gets its own default task queue, derived from its name', () => {
    expect(first.taskQueue).toMatch(/^durable-tools-mcp-test-tools-module-[0-9a-f]{8}$/);
    expect(second.taskQueue).toMatch(/^durable-tools-mcp-mcp-second-tools-module-[0-9a-f]{8}$/);
  });

  test("every call is answered by its own server's worker, never UNKNOWN_TOOL from the other's", async () => {
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        i % 2 === 0
          ? first.client.callTool({ name: 'add', arguments: { a: i, b: 1 } })
          : second.client.callTool({ name: 'echo_b', arguments: { text: `t${i}` } }),
      ),
    );
    expect(results.map((r) => r.isError ?? false)).toEqual([false, false, false, false, false, false]);
    expect(results.map((r) => r.structuredContent)).toEqual([
      { sum: 1 },
      { echoed: 't1' },
      { sum: 3 },
      { echoed: 't3' },
      { sum: 5 },
      { echoed: 't5' },
    ]);
  });

  test('the same key sent to both servers (one shared identity each) makes two calls that never meet', async () => {
    const key = `both-${Date.now()}`;
    const a = await first.client.callTool({ name: 'add', arguments: { a: 2, b: 2 }, _meta: { idempotencyKey: key } });
    const b = await second.client.callTool({
      name: 'echo_b',
      arguments: { text: 'other' },
      _meta: { idempotencyKey: key },
    });
    expect(a.structuredContent).toEqual({ sum: 4 });
    expect(b.structuredContent).toEqual({ echoed: 'other' });
  });

  test("the mcp command's worker writes the approval audit trail to the configured store", async () => {
    const key = `audit-${Date.now()}`;
    const call = () =>
      second.client.callTool({ name: 'wire_b', arguments: { amount: 70 }, _meta: { idempotencyKey: key } });
    expect(JSON.stringify((await call()).content)).toContain('APPROVAL_REQUIRED');
    const waiting = await waitFor('the call to be listed as waiting', async () =>
      (await listPendingApprovals(temporal.client, { taskQueue: second.taskQueue })).find((p) => p.tool === 'wire_b'),
    );
    await approveStep(temporal.client, waiting.workflowId, {
      stepId: waiting.stepId,
      digest: waiting.digest,
      approver: 'auditor',
    });
    await waitFor('the approved call to return its result', async () => !(await call()).isError);
    const runKey = await runKeyOf(temporal.client.workflow.getHandle(waiting.workflowId));
    const audit = new SqliteAuditStore({ path: second.auditPath });
    try {
      const record = await waitFor('the audit record to be complete', async () => {
        const found = await audit.get(`${runKey}/${waiting.stepId}`);
        return found?.outcome !== undefined ? found : undefined;
      });
      expect(record).toMatchObject({ tool: 'wire_b', decision: 'approved', decidedBy: 'auditor' });
    } finally {
      await audit.close();
    }
  });
});

describe('the commands beyond loopback', () => {
  test('refuses --host 0.0.0.0 without a token before binding anything, and names the way out', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dt-mcp-insecure-'));
    const { code, stderr } = await runCliToEnd(
      ['mcp', '--tools', 'test/support/test-tools-module.ts', '--http', '--host', '0.0.0.0', '--port', '0'],
      serverEnv(dir),
    );
    expect(code).toBe(2);
    expect(stderr).toContain('Refusing to serve MCP on 0.0.0.0 without a token');
    expect(stderr).toContain('--insecure-no-auth');
  });

  test('codec-server refuses --host 0.0.0.0 without a token before binding anything', async () => {
    const { code, stderr } = await runCliToEnd(['codec-server', '--host', '0.0.0.0', '--port', '0'], {
      DURABLE_TOOLS_ENCRYPTION_KEYS: keyEntry('k1'),
      DURABLE_TOOLS_CODEC_TOKEN: '',
    });
    expect(code).toBe(1);
    expect(stderr).toContain('Refusing to serve the codec server on 0.0.0.0 without a token');
    expect(stderr).toContain('DURABLE_TOOLS_CODEC_TOKEN');
  });
});
