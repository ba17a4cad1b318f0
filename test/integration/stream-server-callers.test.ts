/**
 * The run stream server as an attacker on this machine would probe it, on the real dev server: each caller reads only
 * the runs it may read (the MCP server's callers: their own MCP runs; the stream token: every run), another caller's
 * run is answered exactly like one that does not exist, a token in the query string is refused, the open streams
 * are capped (503 with Retry-After) and a broken URL encoding is a 400. The runs wait on a task queue without a
 * worker: they exist, so a stream opens, and nothing else is needed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgentRun } from '../../src/client/agent-run-client';
import { startAgentRunStreamServer, type AgentRunStreamServer } from '../../src/client/agent-run-stream-server';
import { mcpAgentRunIdIn, mcpCallerScope } from '../../src/mcp/server/mcp-caller';
import { mcpStreamReaders } from '../../src/mcp/server/mcp-stream-readers';
import { SqliteStreamStore } from '../../src/stores/streams/sqlite-stream-store';
import { startCli, waitForCliOutput } from '../support/cli-process';
import { testServer, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

const temporal = useTestTemporal();
const SERVER = 'trip-tools';
const TOKENS = [
  { name: 'alice', token: 'alice-token-3c1f' },
  { name: 'bob', token: 'bob-token-9a2e' },
];
const STREAM_TOKEN = 'stream-token-77d0';
const taskQueue = uniqueTaskQueue('stream-callers');

let dir: string;
let store: SqliteStreamStore;
const started: string[] = [];
const servers: AgentRunStreamServer[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dt-stream-callers-'));
  store = new SqliteStreamStore({ path: join(dir, 'streams.sqlite') });
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await Promise.all(
    started.map((id) =>
      temporal.client.workflow
        .getHandle(id)
        .terminate('test over')
        .catch(() => undefined),
    ),
  );
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A stream server with the MCP server's static-token callers and the stream token, and these limits. */
async function streamServer(limits: { maxStreams?: number; maxStreamsPerReader?: number } = {}) {
  const server = await startAgentRunStreamServer({
    client: temporal.client,
    store,
    port: 0,
    token: STREAM_TOKEN,
    readers: mcpStreamReaders({ serverName: SERVER, tokens: TOKENS }),
    ...limits,
  });
  servers.push(server);
  return server;
}

/** Starts a run (that waits: no worker polls its queue) under `workflowId`. */
async function runNamed(workflowId: string): Promise<string> {
  await startAgentRun(
    temporal.client,
    { goal: 'wait', model: { provider: 'scripted', script: [] } },
    {
      taskQueue,
      workflowId,
    },
  );
  started.push(workflowId);
  return workflowId;
}

/** A run `name` started through the MCP server `SERVER` with `start_agent_run`. */
const mcpRunOf = (name: string) =>
  runNamed(mcpAgentRunIdIn(mcpCallerScope(SERVER, { subject: `token:${name}` }), undefined));

const streamUrl = (server: AgentRunStreamServer, workflowId: string) =>
  `${server.url}/runs/${encodeURIComponent(workflowId)}/stream`;

/** Opens a stream as `token` (in the header); the answer's status, headers and body (the body only when not 200). */
async function open(url: string, token?: string, signal?: AbortSignal) {
  const response = await fetch(url, {
    headers: { accept: 'text/event-stream', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    ...(signal ? { signal } : {}),
  });
  const body = response.status === 200 ? '' : await response.text();
  if (response.status === 200 && !signal) await response.body?.cancel();
  return { status: response.status, headers: response.headers, body };
}

test('a caller of the MCP server reads the stream of a run it started through MCP', async () => {
  const server = await streamServer();
  const alices = await mcpRunOf('alice');
  const opened = await open(streamUrl(server, alices), 'alice-token-3c1f');
  expect(opened.status).toBe(200);
  expect(opened.headers.get('content-type')).toMatch(/^text\/event-stream/);
});

test("another caller's run is answered exactly like a run that does not exist", async () => {
  const server = await streamServer();
  const alices = await mcpRunOf('alice');
  const asBob = await open(streamUrl(server, alices), 'bob-token-9a2e');
  const unknown = await open(streamUrl(server, `${alices.slice(0, -4)}0000`), 'bob-token-9a2e');
  expect(asBob.status).toBe(404);
  expect(unknown.status).toBe(404);
  expect(asBob.body).toBe(unknown.body);
});

test('a run started from code is read with the stream token only, not by an MCP caller', async () => {
  const server = await streamServer();
  const own = await runNamed(`agent-run-stream-callers-${Date.now()}`);
  expect((await open(streamUrl(server, own), STREAM_TOKEN)).status).toBe(200);
  expect((await open(streamUrl(server, own), 'alice-token-3c1f')).status).toBe(404);
  expect((await open(streamUrl(server, own))).status).toBe(401);
});

test('a token in the query string is refused, a valid one too: only the Authorization header carries it', async () => {
  const server = await streamServer();
  const alices = await mcpRunOf('alice');
  for (const token of [STREAM_TOKEN, 'alice-token-3c1f']) {
    const refused = await open(`${streamUrl(server, alices)}?access_token=${token}`);
    expect(refused.status).toBe(401);
    expect(refused.body).not.toContain(token);
  }
});

test('past the cap of open streams a request is answered 503 with Retry-After, and served again once one closes', async () => {
  const server = await streamServer({ maxStreams: 2 });
  const run = await mcpRunOf('alice');
  const first = new AbortController();
  const second = new AbortController();
  try {
    expect((await open(streamUrl(server, run), STREAM_TOKEN, first.signal)).status).toBe(200);
    expect((await open(streamUrl(server, run), STREAM_TOKEN, second.signal)).status).toBe(200);
    const refused = await open(streamUrl(server, run), 'alice-token-3c1f');
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    first.abort();
    await waitFor('a stream to be served once one closed', async () => {
      const again = await open(streamUrl(server, run), 'alice-token-3c1f');
      return again.status === 200;
    });
  } finally {
    first.abort();
    second.abort();
  }
});

test('one caller cannot hold every stream: past its own share it gets 503, another caller is still served', async () => {
  const server = await streamServer({ maxStreams: 10, maxStreamsPerReader: 1 });
  const run = await mcpRunOf('alice');
  const held = new AbortController();
  try {
    expect((await open(streamUrl(server, run), 'alice-token-3c1f', held.signal)).status).toBe(200);
    expect((await open(streamUrl(server, run), 'alice-token-3c1f')).status).toBe(503);
    expect((await open(streamUrl(server, run), STREAM_TOKEN)).status).toBe(200);
  } finally {
    held.abort();
  }
});

test('a path with a broken percent-encoding is answered 400, not 500', async () => {
  const server = await streamServer();
  const answer = await open(`${server.url}/runs/%E0%A4%A/stream`, STREAM_TOKEN);
  expect(answer.status).toBe(400);
  expect(JSON.parse(answer.body)).toMatchObject({ code: 'BAD_REQUEST' });
});

test("`durable-tools stream-server --mcp-server <name>` admits the MCP server's token callers, each to its own runs", async () => {
  const alices = await mcpRunOf('alice');
  const cli = startCli(['stream-server', '--port', '0', '--mcp-server', SERVER], {
    TEMPORAL_ADDRESS: testServer().address,
    TEMPORAL_NAMESPACE: testServer().namespace,
    DURABLE_TOOLS_STREAM_SQLITE_PATH: join(dir, 'cli-streams.sqlite'),
    DURABLE_TOOLS_MCP_TOKENS: TOKENS.map((t) => `${t.name}:${t.token}`).join(','),
    DURABLE_TOOLS_MCP_TOKEN: '',
    DURABLE_TOOLS_STREAM_TOKEN: '',
  });
  try {
    await waitForCliOutput(cli, /Stream server at (http:\S+):/);
    const base = /Stream server at (http:\S+):/.exec(cli.stdout())![1]!;
    const url = `${base}/runs/${encodeURIComponent(alices)}/stream`;
    expect((await open(url, 'alice-token-3c1f')).status).toBe(200);
    expect((await open(url, 'bob-token-9a2e')).status).toBe(404);
    expect((await open(url)).status).toBe(401);
  } finally {
    process.kill(cli.child.pid!, 'SIGTERM');
    await cli.exited;
  }
});
