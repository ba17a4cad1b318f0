/**
 * The fetch of a protected MCP server's transport: the Bearer header, one renewal and one resend after a 401, a
 * 403 insufficient_scope as a structured error (and then as the model's observation), and error answers without
 * the token; and the OAuth settings of a server entry.
 */
import { failureForThrownError } from '../../src/activities/tool-error-handling';
import { readToolFailureDetails } from '../../src/contract/activity-protocol';
import { parseMcpConfig } from '../../src/mcp/client/mcp-config';
import { classifyMcpCallError } from '../../src/mcp/client/mcp-errors';
import { McpInsufficientScopeError, oauthFetch, REDACTED_TOKEN_TEXT } from '../../src/mcp/client/mcp-oauth-fetch';
import { McpOAuthTokens } from '../../src/mcp/client/mcp-oauth-tokens';
import { defineTool } from '../../src/tools/define-tool';
import { z } from 'zod';
import { fakeAuthorizationServer } from '../support/fake-authorization-server';

const MCP_URL = 'https://tools.example.test/mcp';

/** A protected endpoint answering `answer(token)` to each request, and the tokens it received. */
function protectedServer(answer: (token: string | undefined, nth: number) => Response) {
  const received: (string | undefined)[] = [];
  const bodies: unknown[] = [];
  const as = fakeAuthorizationServer({
    expiresIn: 600,
    mcp: (_url, init) => {
      const token = new Headers(init?.headers).get('authorization')?.replace(/^Bearer /, '');
      received.push(token);
      bodies.push(init?.body);
      return answer(token, received.length);
    },
  });
  const tokens = new McpOAuthTokens({
    server: 'tools',
    url: MCP_URL,
    settings: { issuer: as.issuer, clientId: 'agent', clientSecret: 'env:S' },
    fetch: as.fetch,
    env: { S: 'secret' },
  });
  return { as, received, bodies, fetch: oauthFetch(tokens, as.fetch) };
}

const post = { method: 'POST', body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' };

describe('the Bearer token', () => {
  test('every request carries the current token', async () => {
    const server = protectedServer(() => new Response('{}', { status: 200 }));
    await server.fetch(MCP_URL, post);
    await server.fetch(MCP_URL, post);
    expect(server.received).toEqual(['token-1', 'token-1']);
  });

  test('a 401 renews the token once and sends the request once more, with the same body', async () => {
    const server = protectedServer((token) =>
      token === 'token-1' ? new Response('expired', { status: 401 }) : new Response('{}', { status: 200 }),
    );
    const response = await server.fetch(MCP_URL, post);
    expect(response.status).toBe(200);
    expect(server.received).toEqual(['token-1', 'token-2']);
    expect(server.bodies).toEqual([post.body, post.body]);
    expect(server.as.tokenRequests).toHaveLength(2);
  });

  test('a second 401 after the renewal is answered as it is: no loop', async () => {
    const server = protectedServer(() => new Response('no', { status: 401 }));
    const response = await server.fetch(MCP_URL, post);
    expect(response.status).toBe(401);
    expect(server.received).toEqual(['token-1', 'token-2']);
  });

  test('an error answer quoting the token has it replaced', async () => {
    const server = protectedServer((token) => new Response(`bad token ${token}`, { status: 400 }));
    const text = await (await server.fetch(MCP_URL, post)).text();
    expect(text).toBe(`bad token ${REDACTED_TOKEN_TEXT}`);
  });
});

describe('403 insufficient_scope', () => {
  const refusal = () =>
    new Response('', {
      status: 403,
      headers: {
        'WWW-Authenticate':
          'Bearer error="insufficient_scope", scope="tools:write", error_description="This call needs the scope tools:write."',
      },
    });

  test('is thrown as McpInsufficientScopeError with the scope the server named', async () => {
    const server = protectedServer(refusal);
    const error = await server.fetch(MCP_URL, post).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpInsufficientScopeError);
    expect(error).toMatchObject({ scope: 'tools:write', description: 'This call needs the scope tools:write.' });
  });

  test('becomes a final MCP_INSUFFICIENT_SCOPE observation with the missing scope, and nothing ran', async () => {
    const server = protectedServer(refusal);
    const thrown = await server.fetch(MCP_URL, post).catch((e: unknown) => e);
    const toolError = classifyMcpCallError('tools', 'create_order', thrown, false);
    const entry = defineTool({
      name: 'tools__create_order',
      description: 'd',
      input: z.object({}),
      output: z.object({}),
      effect: 'irreversible',
      idempotent: false,
    }).catalogEntry;
    const { failure } = failureForThrownError(toolError, { tool: entry, attempt: 1, elapsedMs: 0 });
    const { observation, facts } = readToolFailureDetails(failure);
    expect(failure.nonRetryable).toBe(true);
    expect(observation).toMatchObject({
      code: 'MCP_INSUFFICIENT_SCOPE',
      missingScope: 'tools:write',
      retryable: false,
    });
    expect(observation?.message).toContain('lacks the scope tools:write');
    expect(facts).toEqual({ mayHaveHadEffect: false });
  });

  test('a 403 without insufficient_scope is answered as it is', async () => {
    const server = protectedServer(() => new Response('forbidden', { status: 403 }));
    expect((await server.fetch(MCP_URL, post)).status).toBe(403);
  });
});

describe('the oauth settings of a server entry', () => {
  const entry = (oauth: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    mcpServers: {
      tools: { url: MCP_URL, oauth: { issuer: 'https://auth.example.test', clientId: 'a', ...oauth }, ...extra },
    },
  });

  test('a secret written in the configuration instead of a reference is refused without quoting it', () => {
    const write = () => parseMcpConfig(entry({ clientSecret: 'literal-secret-42' }));
    expect(write).toThrow(/env:NAME or file:PATH/);
    expect(() => write()).not.toThrow(/literal-secret-42/);
  });

  test('oauth without a client secret or a refresh token is refused', () => {
    expect(() => parseMcpConfig(entry({}))).toThrow(/clientSecret .* or refreshToken/);
  });

  test('oauth with an Authorization header is refused', () => {
    expect(() => parseMcpConfig(entry({ clientSecret: 'env:S' }, { headers: { authorization: 'Bearer x' } }))).toThrow(
      /exclusive/,
    );
  });

  test('a valid entry keeps its secret references as they are', () => {
    const config = parseMcpConfig(entry({ clientSecret: 'env:S', scopes: ['tools:read'] }));
    expect(config.mcpServers['tools']).toMatchObject({
      oauth: { clientSecret: 'env:S', scopes: ['tools:read'] },
    });
  });
});
