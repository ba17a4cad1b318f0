/**
 * The OAuth token holder of a protected MCP server, against an in-memory authorization server: discovery and the
 * issuer check, the client-credentials and refresh-token requests, renewal before expiry (injected clock), the
 * single-flight renewal and the 401 path; and the transport's fetch that adds the token.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpOAuthError } from '../../src/mcp/client/mcp-oauth-error';
import { McpOAuthTokens } from '../../src/mcp/client/mcp-oauth-tokens';
import type { McpOAuthSettings } from '../../src/mcp/client/mcp-oauth-config';
import { fakeAuthorizationServer, type FakeAuthorizationServer } from '../support/fake-authorization-server';

const MCP_URL = 'https://tools.example.test/mcp';
const SECRET = 'client-secret-value-7f3a';
const ENV = { MCP_SECRET: SECRET, MCP_REFRESH: 'refresh-0' };

/** A holder for `as`, its clock at `clock.now` (ms), reaching `as` through `fetch` (default `as.fetch`). */
function holderOf(
  as: FakeAuthorizationServer,
  settings: Partial<McpOAuthSettings> = {},
  clock = { now: 0 },
  fetch: typeof as.fetch = as.fetch,
): McpOAuthTokens {
  return new McpOAuthTokens({
    server: 'tools',
    url: MCP_URL,
    settings: {
      issuer: as.issuer,
      clientId: 'agent',
      clientSecret: 'env:MCP_SECRET',
      ...settings,
    },
    now: () => clock.now,
    fetch,
    env: ENV,
  });
}

async function failureOf(promise: Promise<unknown>): Promise<McpOAuthError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(McpOAuthError);
    return error as McpOAuthError;
  }
  throw new Error('expected a failure');
}

describe('the token request', () => {
  test('client credentials are sent with Basic authentication, the scopes and the resource indicator', async () => {
    const as = fakeAuthorizationServer({ expiresIn: 600 });
    await holderOf(as, { scopes: ['tools:read', 'tools:write'] }).accessToken();
    const [request] = as.tokenRequests;
    expect(Object.fromEntries(request!.params)).toEqual({
      grant_type: 'client_credentials',
      scope: 'tools:read tools:write',
      resource: MCP_URL,
    });
    expect(request!.authorization).toBe(`Basic ${Buffer.from(`agent:${SECRET}`).toString('base64')}`);
  });

  test('a configured resource replaces the server URL as the resource indicator', async () => {
    const as = fakeAuthorizationServer({ expiresIn: 600 });
    await holderOf(as, { resource: 'https://tools.example.test' }).accessToken();
    expect(as.tokenRequests[0]!.params.get('resource')).toBe('https://tools.example.test');
  });

  test('a refresh token is sent by the refresh-token grant, and a rotated one is used the next time', async () => {
    const as = fakeAuthorizationServer({ expiresIn: 10, rotateRefreshTokens: true });
    const clock = { now: 0 };
    const tokens = holderOf(as, { refreshToken: 'env:MCP_REFRESH' }, clock);
    await tokens.accessToken();
    clock.now = 10_000;
    await tokens.accessToken();
    expect(as.tokenRequests.map((r) => [r.params.get('grant_type'), r.params.get('refresh_token')])).toEqual([
      ['refresh_token', 'refresh-0'],
      ['refresh_token', 'refresh-1'],
    ]);
  });

  test('a token endpoint given in the settings is used without discovery', async () => {
    const as = fakeAuthorizationServer({ expiresIn: 600 });
    await holderOf(as, { tokenEndpoint: `${as.issuer}/token` }).accessToken();
    expect(as.fetched).toEqual([`${as.issuer}/token`]);
  });

  test('a refusal of the token endpoint is TOKEN_REFUSED with its OAuth error, never the secret', async () => {
    const as = fakeAuthorizationServer();
    as.refuse({ status: 401, error: 'invalid_client', description: 'client authentication failed' });
    const error = await failureOf(holderOf(as).accessToken());
    expect(error.code).toBe('TOKEN_REFUSED');
    expect(error.message).toContain('invalid_client');
    expect(error.message).not.toContain(SECRET);
    expect(error.transient).toBe(false);
  });

  test('a file: reference is read from the file, trimmed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-secret-'));
    writeFileSync(join(dir, 'secret'), `${SECRET}\n`);
    const as = fakeAuthorizationServer({ expiresIn: 600 });
    await holderOf(as, { clientSecret: `file:${join(dir, 'secret')}` }).accessToken();
    expect(as.tokenRequests[0]!.authorization).toBe(`Basic ${Buffer.from(`agent:${SECRET}`).toString('base64')}`);
  });

  test('a token that is not a Bearer token is TOKEN_REFUSED', async () => {
    const as = fakeAuthorizationServer({ expiresIn: 600 });
    const tokens = holderOf(as, {}, { now: 0 }, async (url, init) => {
      const response = await as.fetch(url, init);
      if (!String(url).endsWith('/token')) return response;
      const body = (await response.json()) as Record<string, unknown>;
      return new Response(JSON.stringify({ ...body, token_type: 'DPoP' }), { status: 200 });
    });
    const error = await failureOf(tokens.accessToken());
    expect(error.code).toBe('TOKEN_REFUSED');
    expect(error.message).toContain('"DPoP"');
    expect(error.message).not.toContain('token-1');
  });

  test('an unset secret variable is SECRET_MISSING naming the reference, and nothing is requested', async () => {
    const as = fakeAuthorizationServer();
    const error = await failureOf(holderOf(as, { clientSecret: 'env:NOT_SET_ANYWHERE' }).accessToken());
    expect(error.code).toBe('SECRET_MISSING');
    expect(error.message).toContain('env:NOT_SET_ANYWHERE');
    expect(as.tokenRequests).toHaveLength(0);
  });
});

describe('the issuer', () => {
  test('metadata naming another issuer is ISSUER_MISMATCH, and no credential is sent', async () => {
    const as = fakeAuthorizationServer({ claimedIssuer: 'https://impostor.example.test' });
    const error = await failureOf(holderOf(as).accessToken());
    expect(error.code).toBe('ISSUER_MISMATCH');
    expect(error.message).toContain('https://impostor.example.test');
    expect(error.transient).toBe(false);
    expect(as.tokenRequests).toHaveLength(0);
  });

  test('a trailing slash of the configured issuer is not a mismatch', async () => {
    const as = fakeAuthorizationServer({ expiresIn: 600 });
    await expect(holderOf(as, { issuer: `${as.issuer}/` }).accessToken()).resolves.toBe('token-1');
  });

  test('an unreachable authorization server is transient AUTHORIZATION_SERVER_UNAVAILABLE', async () => {
    const tokens = new McpOAuthTokens({
      server: 'tools',
      url: MCP_URL,
      settings: {
        issuer: 'https://auth.example.test',
        clientId: 'a',
        clientSecret: 'env:MCP_SECRET',
      },
      fetch: () => Promise.reject(new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } })),
      env: ENV,
    });
    const error = await failureOf(tokens.accessToken());
    expect(error.code).toBe('AUTHORIZATION_SERVER_UNAVAILABLE');
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.transient).toBe(true);
  });
});

/**
 * The tokens a holder gives 1 ms before and at `renewAt` ms after its first one, from an authorization server whose
 * tokens last `expiresIn` s.
 */
async function tokensAroundRenewal(
  expiresIn: number,
  renewAt: number,
  settings: Partial<McpOAuthSettings> = {},
): Promise<[string, string]> {
  const clock = { now: 0 };
  const tokens = holderOf(fakeAuthorizationServer({ expiresIn }), settings, clock);
  await tokens.accessToken();
  clock.now = renewAt - 1;
  const before = await tokens.accessToken();
  clock.now = renewAt;
  return [before, await tokens.accessToken()];
}

describe('renewal before expiry', () => {
  test('a token is reused while it is fresh', async () => {
    const as = fakeAuthorizationServer({ expiresIn: 600 });
    const tokens = holderOf(as);
    const given = [await tokens.accessToken(), await tokens.accessToken(), await tokens.accessToken()];
    expect(given).toEqual(['token-1', 'token-1', 'token-1']);
    expect(as.tokenRequests).toHaveLength(1);
  });

  test('a token is renewed 60 s before it expires by default, not sooner', async () => {
    expect(await tokensAroundRenewal(600, 540_000)).toEqual(['token-1', 'token-2']);
  });

  test('the margin is at most half the lifetime of a short-lived token', async () => {
    expect(await tokensAroundRenewal(10, 5_000)).toEqual(['token-1', 'token-2']);
  });

  test('refreshBeforeExpiryMs sets the margin', async () => {
    expect(await tokensAroundRenewal(600, 599_000, { refreshBeforeExpiryMs: 1_000 })).toEqual(['token-1', 'token-2']);
  });

  test('a token without expires_in is kept until a 401', async () => {
    const as = fakeAuthorizationServer();
    const clock = { now: 0 };
    const tokens = holderOf(as, {}, clock);
    await tokens.accessToken();
    clock.now = 10 * 24 * 3_600_000;
    expect(await tokens.accessToken()).toBe('token-1');
    expect(await tokens.renewAfterRejection('token-1')).toBe('token-2');
  });
});

describe('single flight', () => {
  test('concurrent callers during a renewal share one token request', async () => {
    const as = fakeAuthorizationServer({ expiresIn: 600 });
    let release!: () => void;
    as.hold(new Promise<void>((resolve) => (release = resolve)));
    const tokens = holderOf(as);
    const waiting = Promise.all(Array.from({ length: 5 }, () => tokens.accessToken()));
    await new Promise((resolve) => setImmediate(resolve));
    release();
    expect(await waiting).toEqual(Array(5).fill('token-1'));
    expect(as.tokenRequests).toHaveLength(1);
  });

  test('concurrent rejections of one token renew it once', async () => {
    const as = fakeAuthorizationServer({ expiresIn: 600 });
    const tokens = holderOf(as);
    await tokens.accessToken();
    const renewed = await Promise.all(Array.from({ length: 4 }, () => tokens.renewAfterRejection('token-1')));
    expect(renewed).toEqual(Array(4).fill('token-2'));
    expect(as.tokenRequests).toHaveLength(2);
  });

  test('a rejection of a token already replaced gives the new one without a request', async () => {
    const as = fakeAuthorizationServer({ expiresIn: 600 });
    const tokens = holderOf(as);
    await tokens.accessToken();
    await tokens.renewAfterRejection('token-1');
    expect(await tokens.renewAfterRejection('token-1')).toBe('token-2');
    expect(as.tokenRequests).toHaveLength(2);
  });

  test('a failed renewal is not kept: the next caller tries again', async () => {
    const as = fakeAuthorizationServer({ expiresIn: 600 });
    as.refuse({ status: 503, error: 'temporarily_unavailable' });
    const tokens = holderOf(as);
    await expect(tokens.accessToken()).rejects.toBeInstanceOf(McpOAuthError);
    as.refuse(undefined);
    await expect(tokens.accessToken()).resolves.toBe('token-1');
  });
});
