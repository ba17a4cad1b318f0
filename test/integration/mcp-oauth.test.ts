/**
 * The MCP server as an OAuth resource server, against a real OpenID provider (`oidc-provider`, in its own process)
 * issuing JWT access tokens by the client-credentials grant: the 401 challenge and the protected resource metadata
 * (RFC 9728), refused tokens (expired, for another resource, of another issuer, forged, not a JWT), 403
 * insufficient_scope for a tool the token may not call, and the token's subject as the caller scope of keys and
 * tasks. One listener, a worker of the recording tools in this process, SDK clients with a Bearer header.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, importJWK } from 'jose';
import { startAgentRun } from '../../src/client/agent-run-client';
import { startAgentRunStreamServer } from '../../src/client/agent-run-stream-server';
import { DEFAULT_MCP_SERVER_NAME, mcpAgentRunIdIn, mcpCallerScope } from '../../src/mcp/server/mcp-caller';
import { mcpStreamReaders } from '../../src/mcp/server/mcp-stream-readers';
import { SqliteStreamStore } from '../../src/stores/streams/sqlite-stream-store';
import { startMcpHttpListener } from '../../src/mcp/server/mcp-http-listener';
import { mcpReadOnlyToolNames } from '../../src/mcp/server/mcp-oauth-scopes';
import { createDurableMcpServer, mcpCallWorkflowId } from '../../src/mcp/server/mcp-server';
import { McpConfigError } from '../../src/mcp/client/mcp-config-error';
import { createMcpAccessTokenVerifier } from '../../src/mcp/server/mcp-oauth-verifier';
import { createToolRegistry } from '../../src/tools/tool-registry';
import { useMcpTestListener } from '../support/mcp-test-listener';
import { expectTasksListedToTheirCallersOnly } from '../support/mcp-task-isolation';
import {
  oidcSigningKey,
  startOidcTestProvider,
  useOidcTestProvider,
  type OidcTestProvider,
} from '../support/oidc-provider';
import { createTestWorker, testServer, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { createRecordingTools, createWaitForCancelTool } from '../support/test-tools';
import { isStepKeyOf } from '../support/run-key';
import { runCliToEnd, startCli, waitForCliOutput } from '../support/cli-process';

const BOTH = 'tools:read tools:write';
const signingKey = oidcSigningKey();
const provider = useOidcTestProvider({
  signingKey,
  clients: [
    { id: 'alice', scope: BOTH },
    { id: 'bob', scope: BOTH },
    { id: 'reader', scope: 'tools:read' },
    { id: 'late', scope: BOTH },
  ],
  expiredClients: ['late'],
});
const temporal = useTestTemporal({
  worker: (temporal) => createTestWorker(temporal, { tools: registry.list(), taskQueue }),
});
const taskQueue = uniqueTaskQueue('mcp-oauth');
const recording = createRecordingTools();
const registry = createToolRegistry([...recording.tools, createWaitForCancelTool()]);
const mcp = useMcpTestListener(temporal, {
  taskQueue,
  catalog: () => registry.catalog(),
  oauth: () => ({ issuer: provider().issuer, scopes: { readOnlyTools: mcpReadOnlyToolNames(registry.catalog()) } }),
});

const ALICE = { subject: 'alice', clientId: 'alice' };
const BOB = { subject: 'bob', clientId: 'bob' };
const unique = (label: string) => `${label}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;

/** An access token of `client` for this MCP server (or `resource`). */
const tokenOf = (client: string, scope = BOTH, resource = mcp.listener().url) =>
  provider().token(client, { resource, scope });

/** POSTs one JSON-RPC message to the listener, as `Bearer <token>` when given. */
function post(body: unknown, token?: string): Promise<Response> {
  return fetch(mcp.listener().url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...(token !== undefined ? { Authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const createOrder = (key: string) => ({
  jsonrpc: '2.0',
  id: 2,
  method: 'tools/call',
  params: { name: 'create_order', arguments: { item: 'book', quantity: 1 }, _meta: { idempotencyKey: key } },
});

/** The parameters of a `WWW-Authenticate: Bearer k="v", ...` header. */
function challengeOf(response: Response): Record<string, string> {
  const header = response.headers.get('www-authenticate') ?? '';
  expect(header).toMatch(/^Bearer /);
  return Object.fromEntries([...header.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
}

/** The metadata URL a 401 must name: the path-suffixed form for the endpoint at /mcp. */
const metadataUrl = () => `${new URL(mcp.listener().url).origin}/.well-known/oauth-protected-resource/mcp`;

/** Calls of `create_order` the tools really made under the workflow of `key` for `caller`. */
function effectsOf(key: string, caller: { subject: string; clientId: string }): number {
  const workflowId = mcpCallWorkflowId(key, { caller });
  return recording.calls.filter((c) => isStepKeyOf(workflowId, 1, c.idempotencyKey)).length;
}

describe('discovery', () => {
  test('a request without a token is answered 401 with the resource metadata URL and the scopes', async () => {
    const response = await post(INITIALIZE);
    expect(response.status).toBe(401);
    expect(challengeOf(response)).toEqual({ resource_metadata: metadataUrl(), scope: BOTH });
  });

  test('the protected resource metadata names the resource, the issuer, the scopes and the header method', async () => {
    const expected = {
      resource: mcp.listener().url,
      authorization_servers: [provider().issuer],
      scopes_supported: ['approvals', 'tools:read', 'tools:write'],
      bearer_methods_supported: ['header'],
    };
    const root = `${new URL(mcp.listener().url).origin}/.well-known/oauth-protected-resource`;
    for (const url of [metadataUrl(), root]) {
      const response = await fetch(url);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual(expected);
    }
  });
});

describe('refused tokens', () => {
  /** The answer to an initialize with `token`: status and challenge. */
  async function refusalOf(
    token: string,
  ): Promise<{ status: number; challenge: Record<string, string>; body: string }> {
    const response = await post(INITIALIZE, token);
    return { status: response.status, challenge: challengeOf(response), body: await response.text() };
  }

  test('an expired token is refused with 401 invalid_token', async () => {
    const refused = await refusalOf(await tokenOf('late'));
    expect(refused.status).toBe(401);
    expect(refused.challenge).toMatchObject({ error: 'invalid_token', resource_metadata: metadataUrl() });
    expect(refused.challenge['error_description']).toContain('expired');
  });

  test('a token for another resource is refused with 401 invalid_token', async () => {
    const refused = await refusalOf(await tokenOf('alice', BOTH, 'https://elsewhere.example/mcp'));
    expect(refused.status).toBe(401);
    expect(refused.challenge).toMatchObject({ error: 'invalid_token' });
    expect(refused.challenge['error_description']).toContain('aud');
  });

  test('a token of another issuer, though signed with the same key, is refused with 401 invalid_token', async () => {
    let foreign: OidcTestProvider | undefined;
    try {
      foreign = await startOidcTestProvider({ signingKey, clients: [{ id: 'alice', scope: BOTH }] });
      const refused = await refusalOf(await foreign.token('alice', { resource: mcp.listener().url, scope: BOTH }));
      expect(refused.status).toBe(401);
      expect(refused.challenge).toMatchObject({ error: 'invalid_token' });
      expect(refused.challenge['error_description']).toContain('another authorization server');
    } finally {
      await foreign?.stop();
    }
  });

  test('a token naming the issuer but signed with another key is refused with 401 invalid_token', async () => {
    const forged = await new SignJWT({ scope: BOTH, client_id: 'alice' })
      .setProtectedHeader({ alg: 'RS256', kid: String(signingKey['kid']) })
      .setIssuer(provider().issuer)
      .setAudience(mcp.listener().url)
      .setSubject('alice')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(await importJWK(oidcSigningKey(String(signingKey['kid'])), 'RS256'));
    const refused = await refusalOf(forged);
    expect(refused.status).toBe(401);
    expect(refused.challenge).toMatchObject({ error: 'invalid_token' });
    expect(refused.challenge['error_description']).toContain('not signed by the authorization server');
  });

  /** A token signed with the provider's own key, for this server, with these claims and header fields. */
  async function signedByTheIssuer(claims: Record<string, unknown>, header: Record<string, unknown> = {}) {
    return new SignJWT({ scope: BOTH, client_id: 'alice', ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: String(signingKey['kid']), typ: 'at+jwt', ...header })
      .setIssuer(provider().issuer)
      .setAudience(mcp.listener().url)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(await importJWK(signingKey, 'RS256'));
  }

  test('a token of the issuer whose sub is not a string (an array, a number) is refused with 401 invalid_token', async () => {
    expect((await post(INITIALIZE, await signedByTheIssuer({ sub: 'alice' }))).status).toBe(200);
    for (const sub of [['alice'], 12345]) {
      const refused = await refusalOf(await signedByTheIssuer({ sub }));
      expect(refused.status).toBe(401);
      expect(refused.challenge).toMatchObject({ error: 'invalid_token' });
      expect(refused.challenge['error_description']).toContain('sub');
    }
  });

  test('a token of the issuer typed JWT, not at+jwt (RFC 9068), is refused with 401 invalid_token', async () => {
    for (const typ of ['JWT', undefined]) {
      const refused = await refusalOf(await signedByTheIssuer({ sub: 'alice' }, { typ }));
      expect(refused.status).toBe(401);
      expect(refused.challenge).toMatchObject({ error: 'invalid_token' });
      expect(refused.challenge['error_description']).toContain('at+jwt');
    }
  });

  test('a verifier configured for an issuer that types its access tokens JWT accepts those and nothing else', async () => {
    const verifier = createMcpAccessTokenVerifier({
      issuer: provider().issuer,
      audience: mcp.listener().url,
      tokenType: 'JWT',
    });
    const typed = await verifier.verify(await signedByTheIssuer({ sub: 'alice' }, { typ: 'JWT' }));
    expect(typed).toMatchObject({ ok: true, caller: { subject: 'alice' } });
    const other = await verifier.verify(await signedByTheIssuer({ sub: 'alice' }));
    expect(other).toMatchObject({ ok: false, error: 'invalid_token' });
  });

  test('a token that is not a JWT is refused with 401 invalid_token, and the answer never quotes it', async () => {
    const garbage = `garbage-${unique('token')}`;
    const refused = await refusalOf(garbage);
    expect(refused.status).toBe(401);
    expect(refused.challenge).toMatchObject({ error: 'invalid_token' });
    expect(JSON.stringify(refused)).not.toContain(garbage);
  });
});

describe('scopes', () => {
  test('a token with the read scope only may call a read-only tool', async () => {
    const reader = await mcp.connect(await tokenOf('reader', 'tools:read'));
    const result = await reader.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
    expect(result.isError).toBeFalsy();
  });

  test('a token without the write scope gets 403 insufficient_scope naming tools:write for a writing tool', async () => {
    const token = await tokenOf('reader', 'tools:read');
    const response = await post(createOrder(unique('no-write')), token);
    expect(response.status).toBe(403);
    expect(challengeOf(response)).toMatchObject({
      error: 'insufficient_scope',
      scope: 'tools:write',
      resource_metadata: metadataUrl(),
    });
  });

  test('a call refused for its scope in a session never runs', async () => {
    const reader = await mcp.connect(await tokenOf('reader', 'tools:read'));
    const key = unique('refused');
    await expect(
      reader.callTool({
        name: 'create_order',
        arguments: { item: 'book', quantity: 1 },
        _meta: { idempotencyKey: key },
      }),
    ).rejects.toThrow(/needs the scope tools:write/);
    expect(effectsOf(key, { subject: 'reader', clientId: 'reader' })).toBe(0);
  });
});

describe("the token's subject as the caller", () => {
  test('the same idempotency key sent by two subjects makes two calls, one each', async () => {
    const [alice, bob] = [await mcp.connect(await tokenOf('alice')), await mcp.connect(await tokenOf('bob'))];
    const key = unique('shared-key');
    for (const client of [alice, bob, alice]) {
      const result = await client.callTool({
        name: 'create_order',
        arguments: { item: 'book', quantity: 1 },
        _meta: { idempotencyKey: key },
      });
      expect(result.isError).toBeFalsy();
    }
    expect([effectsOf(key, ALICE), effectsOf(key, BOB)]).toEqual([1, 1]);
  });

  test("tasks/list and tasks/get answer a subject its own tasks and none of another subject's", async () => {
    const [alice, bob] = [await mcp.connect(await tokenOf('alice')), await mcp.connect(await tokenOf('bob'))];
    const [alices] = await expectTasksListedToTheirCallersOnly(alice, bob);
    await expect(bob.experimental.tasks.getTask(alices)).rejects.toThrow();
  });
});

describe('configuration', () => {
  test('OAuth and static tokens together are refused before the listener starts', async () => {
    await expect(
      startMcpHttpListener({
        port: 0,
        tokens: [{ name: 'alice', token: 'alice-secret' }],
        oauth: { issuer: provider().issuer },
        createServer: (caller) =>
          createDurableMcpServer({ client: temporal.client, taskQueue, catalog: registry.catalog(), caller }),
      }),
    ).rejects.toThrow(McpConfigError);
  });
});

describe('the `durable-tools mcp` command', () => {
  const env = () => ({
    TEMPORAL_ADDRESS: testServer().address,
    TEMPORAL_NAMESPACE: testServer().namespace,
    DURABLE_TOOLS_MCP_TOKEN: '',
    DURABLE_TOOLS_MCP_TOKENS: '',
    DURABLE_TOOLS_TASK_QUEUE: taskQueue,
  });
  const args = ['mcp', '--tools', 'test/support/test-tools-module.ts', '--http', '--port', '0', '--no-worker'];

  test('--oauth-issuer with a static token set too exits 2 saying they are exclusive', async () => {
    const { code, stderr } = await runCliToEnd([...args, '--oauth-issuer', provider().issuer], {
      ...env(),
      DURABLE_TOOLS_MCP_TOKEN: 'static-secret',
    });
    expect(code).toBe(2);
    expect(stderr).toContain('exclusive');
  });

  test('--oauth-issuer serves a 401 naming its metadata to a request without a token, and accepts a token', async () => {
    const cli = startCli([...args, '--oauth-issuer', provider().issuer], env());
    try {
      await waitForCliOutput(cli, /MCP server at (http:\S+):/);
      const url = /MCP server at (http:\S+):/.exec(cli.stderr())![1]!;
      const send = (token?: string) =>
        fetch(url, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            ...(token ? { Authorization: `Bearer ${token}` } : {}),
          },
          body: JSON.stringify(INITIALIZE),
        });
      const refused = await send();
      expect(refused.status).toBe(401);
      expect(challengeOf(refused)['resource_metadata']).toBe(
        `${new URL(url).origin}/.well-known/oauth-protected-resource/mcp`,
      );
      const accepted = await send(await provider().token('alice', { resource: url, scope: BOTH }));
      expect(accepted.status).toBe(200);
    } finally {
      process.kill(cli.child.pid!, 'SIGTERM');
      await cli.exited;
    }
  });
});

describe('the run stream server, for the callers of this MCP server', () => {
  test("an OAuth access token for the MCP server reads its subject's runs at the stream server, and no other's", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-oauth-streams-'));
    const store = new SqliteStreamStore({ path: join(dir, 'streams.sqlite') });
    const sse = await startAgentRunStreamServer({
      client: temporal.client,
      store,
      port: 0,
      readers: mcpStreamReaders({ oauth: { issuer: provider().issuer, audience: mcp.listener().url } }),
    });
    const workflowId = mcpAgentRunIdIn(mcpCallerScope(DEFAULT_MCP_SERVER_NAME, ALICE), undefined);
    try {
      const input = { goal: 'wait', model: { provider: 'scripted', script: [] } };
      await startAgentRun(temporal.client, input, { taskQueue: uniqueTaskQueue('mcp-oauth-streams'), workflowId });
      const read = async (token: string) => {
        const response = await fetch(`${sse.url}/runs/${workflowId}/stream`, {
          headers: { authorization: `Bearer ${token}` },
        });
        await response.body?.cancel();
        return response.status;
      };
      expect(await read(await tokenOf('alice'))).toBe(200);
      expect(await read(await tokenOf('bob'))).toBe(404);
      expect(await read(await tokenOf('alice', BOTH, 'https://elsewhere.example/mcp'))).toBe(401);
    } finally {
      await temporal.client.workflow
        .getHandle(workflowId)
        .terminate('test over')
        .catch(() => undefined);
      await sse.close();
      await store.close();
    }
  });
});
