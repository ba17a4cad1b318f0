/**
 * The worker as an OAuth client of a protected MCP server: our own durable MCP server in OAuth mode, behind a real
 * OpenID provider (`oidc-provider`, in its own process) issuing JWT access tokens by the client-credentials grant.
 * Agent runs on a second worker call its tools through an `oauth` server entry: a call succeeds; a token that
 * expires during a long call is renewed (before the next call, or after a 401 when the worker's clock lags) and the
 * model never sees an error; no token text is in the run's history, the worker's logs or the step summaries; a wrong
 * issuer is refused before any credential is sent; a missing scope is the structured MCP_INSUFFICIENT_SCOPE.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@temporalio/common';
import { decodeJwt } from 'jose';
import { z } from 'zod';
import { createMcpHost, type McpHost, type McpHostOptions } from '../../src/mcp/client/mcp-host';
import type { McpServersConfigInput } from '../../src/mcp/client/mcp-config';
import { PermanentToolError } from '../../src/failures/tool-errors';
import { mcpReadOnlyToolNames } from '../../src/mcp/server/mcp-oauth-scopes';
import { defineTool } from '../../src/tools/define-tool';
import { createToolRegistry } from '../../src/tools/tool-registry';
import type { AgentRunResult } from '../../src/contract/agent-run-types';
import { callTurn, runToEnd, scriptedRun } from '../support/agent-runs';
import { useMcpTestListener } from '../support/mcp-test-listener';
import { useOidcTestProvider } from '../support/oidc-provider';
import { createTestWorker, loggerWriting, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { createRecordingTools } from '../support/test-tools';

/** Seconds an access token of the `brief` client lives. */
const BRIEF_TTL_SECONDS = 4;
const TOOL_SCOPES = ['tools:read', 'tools:write'];

const provider = useOidcTestProvider({
  clients: [
    { id: 'agent', scope: 'tools:read tools:write reports:read' },
    { id: 'brief', scope: 'tools:read tools:write' },
  ],
  accessTokenTtlSeconds: { brief: BRIEF_TTL_SECONDS },
});

/** `sleep` (read-only): waits `ms`, then answers `{ slept }`. */
const sleepTool = defineTool({
  name: 'sleep',
  description: 'Waits, then answers.',
  input: z.object({ ms: z.number().int().min(0) }),
  output: z.object({ slept: z.number() }),
  effect: 'read-only',
  idempotent: true,
  timeout: '2m',
}).implement(async ({ ms }) => {
  await new Promise((resolve) => setTimeout(resolve, ms));
  return { slept: ms };
});

/** How many times `report` ran. */
let reports = 0;
/** `report` (read-only) needs the scope `reports:read`, which no entry below asks for. */
const reportTool = defineTool({
  name: 'report',
  description: 'Reads the report.',
  input: z.object({}),
  output: z.object({ lines: z.number() }),
  effect: 'read-only',
  idempotent: true,
}).implement(async () => {
  reports += 1;
  return { lines: 3 };
});

const serverQueue = uniqueTaskQueue('mcp-oauth-server');
const recording = createRecordingTools();
const registry = createToolRegistry([...recording.tools, sleepTool, reportTool]);
const logLines: string[] = [];
// This file owns the process's runtime (as test/integration/secrets-in-logs.test.ts does): every line reaches logLines.
const temporal = useTestTemporal({
  logger: lineLogger(logLines),
  worker: (temporal) => createTestWorker(temporal, { tools: registry.list(), taskQueue: serverQueue }),
});
const mcp = useMcpTestListener(temporal, {
  taskQueue: serverQueue,
  catalog: () => registry.catalog(),
  oauth: () => ({
    issuer: provider().issuer,
    clockToleranceSeconds: 0,
    scopes: { readOnlyTools: mcpReadOnlyToolNames(registry.catalog()), perTool: { report: ['reports:read'] } },
  }),
});

/** A logger keeping every line of the process's Temporal runtime in `into`, as `level message meta`. */
function lineLogger(into: string[]): Logger {
  return loggerWriting((level, message, meta) => into.push(`${level} ${message} ${safeJson(meta)}`));
}

/** One HTTP exchange of the client worker, as its fetch saw it. */
interface Exchange {
  url: string;
  method: string;
  /** The Bearer token the request carried. */
  bearer?: string;
  /** The JSON-RPC method and tool of an MCP POST. */
  rpc?: string;
  status: number;
  /** When the answer's headers arrived (ms since the epoch). */
  at: number;
}

/** A fetch recording every exchange and every access token the token endpoint issued. */
function recordingFetch(): {
  fetch: NonNullable<NonNullable<McpHostOptions['oauth']>['fetch']>;
  exchanges: Exchange[];
  issued: string[];
} {
  const exchanges: Exchange[] = [];
  const issued: string[] = [];
  return {
    exchanges,
    issued,
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      const bearer = new Headers(init?.headers).get('authorization')?.replace(/^Bearer /, '');
      exchanges.push({
        url: String(url),
        method: init?.method ?? 'GET',
        ...(bearer ? { bearer } : {}),
        ...rpcOf(init?.body),
        status: response.status,
        at: Date.now(),
      });
      if (String(url).endsWith('/token') && response.ok) {
        const body = (await response.clone().json()) as { access_token?: string };
        if (body.access_token) issued.push(body.access_token);
      }
      return response;
    },
  };
}

function rpcOf(body: unknown): { rpc?: string } {
  if (typeof body !== 'string') return {};
  try {
    const message = JSON.parse(body) as { method?: string; params?: { name?: string } };
    return message.method
      ? { rpc: message.params?.name ? `${message.method} ${message.params.name}` : message.method }
      : {};
  } catch {
    return {};
  }
}

/** The `protected` server entry for client `client` of the provider. */
function protectedEntry(client: string, oauth: Record<string, unknown> = {}): McpServersConfigInput {
  return {
    mcpServers: {
      protected: {
        url: mcp.listener().url,
        trust: 'trusted',
        oauth: {
          issuer: provider().issuer,
          clientId: client,
          clientSecret: 'env:MCP_CLIENT_SECRET',
          scopes: TOOL_SCOPES,
          ...oauth,
        },
      },
    },
  };
}

/** Runs `script` on a client worker of `config`; every warning it printed is kept in `warnings`. */
async function runThrough(
  label: string,
  config: McpServersConfigInput,
  script: Parameters<typeof scriptedRun>[1],
  options: McpHostOptions & { client: string },
): Promise<{ result: AgentRunResult; history: string; warnings: string[]; host: McpHost }> {
  const warnings: string[] = [];
  const host = createMcpHost(config, {
    warn: (message) => warnings.push(message),
    ...options,
    oauth: { env: { MCP_CLIENT_SECRET: `${options.client}-secret` }, ...options.oauth },
  });
  const taskQueue = uniqueTaskQueue(`mcp-oauth-client-${label}`);
  try {
    const worker = await createTestWorker(temporal, { tools: [], taskQueue, mcp: host });
    const { handle, result } = await runToEnd(
      worker,
      temporal.client,
      taskQueue,
      scriptedRun(label, [...script, { text: 'done', final: true }]),
    );
    return { result, history: historyText(await handle.fetchHistory()), warnings, host };
  } finally {
    await host.close();
  }
}

/** Every field of a history, each payload's `data` (base64 in the fetched history) decoded as UTF-8 text too. */
function historyText(history: unknown): string {
  return JSON.stringify(history, (key, value: unknown) => {
    if (value instanceof Uint8Array)
      return `${Buffer.from(value).toString('utf8')} ${Buffer.from(value).toString('base64')}`;
    if (key === 'data' && typeof value === 'string') return `${Buffer.from(value, 'base64').toString('utf8')} ${value}`;
    return typeof value === 'bigint' ? String(value) : value;
  });
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return String(value);
  }
}

/** Expects none of `tokens` (nor their signature part alone) anywhere in `texts`. */
function expectNoToken(tokens: readonly string[], texts: readonly string[]): void {
  expect(tokens.length).toBeGreaterThan(0);
  for (const token of tokens) {
    const signature = token.split('.')[2]!;
    for (const text of texts) {
      expect(text.includes(token)).toBe(false);
      expect(text.includes(signature)).toBe(false);
    }
  }
}

const okSteps = (result: AgentRunResult) => result.steps.map((step) => step.observation?.status);

test('a tool call through a protected server succeeds, with a token of the configured client', async () => {
  const recorded = recordingFetch();
  const { result } = await runThrough('call', protectedEntry('agent'), [callTurn('protected__add', { a: 2, b: 40 })], {
    client: 'agent',
    oauth: { fetch: recorded.fetch },
  });
  expect(result.status).toBe('completed');
  expect(result.steps[0]?.observation).toEqual({
    status: 'ok',
    output: expect.objectContaining({ structuredContent: { sum: 42 } }),
  });
  expect(recorded.issued).toHaveLength(1);
  expect(decodeJwt(recorded.issued[0]!)).toMatchObject({
    client_id: 'agent',
    aud: mcp.listener().url,
    scope: 'tools:read tools:write',
  });
});

test('a token that expires during a long call is renewed before the next call; no token is in history, logs or summaries', async () => {
  const recorded = recordingFetch();
  const consoleLines: string[] = [];
  const spies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((level) =>
    jest.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      consoleLines.push(args.map(String).join(' '));
    }),
  );
  let run: Awaited<ReturnType<typeof runThrough>>;
  try {
    run = await runThrough(
      'expiry',
      protectedEntry('brief'),
      [
        callTurn('protected__sleep', { ms: (BRIEF_TTL_SECONDS + 1) * 1000 }),
        callTurn('protected__add', { a: 1, b: 1 }),
      ],
      { client: 'brief', oauth: { fetch: recorded.fetch } },
    );
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  expect(okSteps(run.result)).toEqual(['ok', 'ok']);
  const callOf = (tool: string) => recorded.exchanges.find((e) => e.rpc === `tools/call ${tool}` && e.status === 200)!;
  const [long, next] = [callOf('sleep'), callOf('add')];
  // The long call's token expired while it ran; the next call went out with a newer one, without any 401.
  expect(decodeJwt(long.bearer!).exp! * 1000).toBeLessThan(next.at);
  expect(next.bearer).not.toBe(long.bearer);
  expect(recorded.issued).toContain(next.bearer);
  expect(recorded.exchanges.filter((e) => e.status === 401)).toEqual([]);
  // The search can find what is there: the history's payloads are decoded, the logs were captured.
  expect(run.history).toMatch(/slept\\?":5000/);
  expect(logLines.length).toBeGreaterThan(0);
  expectNoToken(recorded.issued, [
    run.history,
    ...logLines,
    ...consoleLines,
    ...run.warnings,
    JSON.stringify(run.result),
  ]);
});

test("a token the server refuses as expired while the worker's clock says it is fresh is renewed after the 401, once", async () => {
  const recorded = recordingFetch();
  const { result } = await runThrough(
    'lagging-clock',
    protectedEntry('brief'),
    [
      callTurn('protected__add', { a: 1, b: 2 }),
      callTurn('protected__sleep', { ms: (BRIEF_TTL_SECONDS + 1) * 1000 }),
      callTurn('protected__add', { a: 3, b: 4 }),
    ],
    // The worker's clock stands still: it never renews a token before use.
    { client: 'brief', oauth: { fetch: recorded.fetch, now: () => 0 } },
  );
  expect(okSteps(result)).toEqual(['ok', 'ok', 'ok']);
  const refused = recorded.exchanges.filter((e) => e.status === 401);
  const refusedCalls = refused.filter((e) => e.method === 'POST');
  expect(refusedCalls.length).toBeGreaterThanOrEqual(1);
  for (const rejection of refusedCalls) {
    // Each refused request was sent once more, with a token issued after the refusal, and then accepted.
    const later = recorded.exchanges.slice(recorded.exchanges.indexOf(rejection) + 1);
    const retry = later.find((e) => e.method === 'POST' && e.rpc === rejection.rpc);
    expect(retry).toMatchObject({ url: rejection.url, status: 200 });
    expect(retry?.bearer).not.toBe(rejection.bearer);
    expect(recorded.issued).toContain(retry?.bearer);
  }
  // One renewal per refused token, however many requests it was refused for.
  expect(recorded.issued.length).toBe(new Set(refused.map((e) => e.bearer)).size + 1);
});

describe('a wrong issuer', () => {
  let impostor: Server;
  let impostorUrl: string;
  const impostorRequests: string[] = [];
  beforeAll(async () => {
    // It publishes the real provider's metadata, whose issuer is not its own URL.
    impostor = createServer((req, res) => {
      impostorRequests.push(`${req.method} ${req.url}`);
      void fetch(`${provider().issuer}${req.url}`).then(async (upstream) => {
        res.writeHead(upstream.status, { 'content-type': 'application/json' });
        res.end(await upstream.text());
      });
    });
    await new Promise<void>((resolve) => impostor.listen(0, '127.0.0.1', resolve));
    impostorUrl = `http://127.0.0.1:${(impostor.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => impostor.close(resolve));
  });

  test('is refused before any credential is sent: the listing says why, and a call fails permanently', async () => {
    const recorded = recordingFetch();
    const host = createMcpHost(protectedEntry('agent', { issuer: impostorUrl }), {
      warn: () => {},
      oauth: { fetch: recorded.fetch, env: { MCP_CLIENT_SECRET: 'agent-secret' } },
    });
    try {
      await host.refresh();
      expect(host.listingErrors()['protected']).toBe(
        `MCP server "protected" oauth: the authorization server at ${impostorUrl} says its issuer is "${provider().issuer}", not the configured "${impostorUrl}"; no credential was sent. Fix oauth.issuer (RFC 8414 requires them to be identical).`,
      );
      const call = host.pool.callTool('protected', 'add', { a: 1, b: 1 });
      await expect(call).rejects.toBeInstanceOf(PermanentToolError);
      await expect(call).rejects.toMatchObject({ code: 'PERMISSION_DENIED' });
      expect(recorded.exchanges.filter((e) => e.method === 'POST')).toEqual([]);
      expect(impostorRequests.every((request) => request.startsWith('GET /.well-known/'))).toBe(true);
    } finally {
      await host.close();
    }
  });
});

test('a scope the token lacks is a final MCP_INSUFFICIENT_SCOPE observation naming it, and the tool never ran', async () => {
  const { result } = await runThrough(
    'scope',
    protectedEntry('agent'),
    [callTurn('protected__report', {}), callTurn('protected__add', { a: 1, b: 1 })],
    {
      client: 'agent',
    },
  );
  expect(result.steps[0]?.observation).toMatchObject({
    status: 'error',
    code: 'MCP_INSUFFICIENT_SCOPE',
    missingScope: 'reports:read',
    retryable: false,
    attempts: 1,
  });
  expect(result.steps[1]?.observation?.status).toBe('ok');
  expect(reports).toBe(0);
});
