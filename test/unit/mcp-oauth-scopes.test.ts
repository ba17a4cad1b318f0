/**
 * The scopes of the MCP server's OAuth mode on their own: which scopes a JSON-RPC body needs, which a token grants,
 * and the `--oauth-*` flags of `durable-tools mcp`.
 */
import { mcpOAuthModeOf, mcpOAuthOptionsOf } from '../../src/mcp/server/mcp-oauth-flags';
import { mcpToolScopes, scopesGrantedBy, scopesNeededBy } from '../../src/mcp/server/mcp-oauth-scopes';

const call = (name: string) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } });
const scopes = mcpToolScopes({ readOnlyTools: ['add'], perTool: { wire: ['payments:write', 'tools:write'] } });

describe('scopes a body needs', () => {
  test('a read-only tool needs the read scope and any other tool the write scope', () => {
    expect(scopesNeededBy(call('add'), scopes)).toEqual(['tools:read']);
    expect(scopesNeededBy(call('create_order'), scopes)).toEqual(['tools:write']);
  });

  test('a tool with scopes of its own needs exactly those', () => {
    expect(scopesNeededBy(call('wire'), scopes)).toEqual(['payments:write', 'tools:write']);
  });

  test('a batch needs the scopes of every call in it, and other methods need none', () => {
    const batch = [call('add'), { jsonrpc: '2.0', id: 2, method: 'tools/list' }, call('create_order')];
    expect(scopesNeededBy(batch, scopes).sort()).toEqual(['tools:read', 'tools:write']);
    expect(scopesNeededBy({ jsonrpc: '2.0', id: 3, method: 'tasks/list' }, scopes)).toEqual([]);
  });

  test('the supported scopes are the read, write, approvals and per-tool scopes, sorted', () => {
    expect(scopes.supported).toEqual(['approvals', 'payments:write', 'tools:read', 'tools:write']);
  });

  test('decide_approval needs the approvals scope alone, and a 401 challenge does not ask for it', () => {
    expect(scopesNeededBy(call('decide_approval'), scopes)).toEqual(['approvals']);
    expect(scopes.requested).toEqual(['payments:write', 'tools:read', 'tools:write']);
  });

  test('list_pending_approvals is a read-only tool of the server', () => {
    expect(scopesNeededBy(call('list_pending_approvals'), mcpToolScopes())).toEqual(['tools:read']);
  });

  test('the approvals scope can be renamed', () => {
    const renamed = mcpToolScopes({ approvals: 'payments:approve' });
    expect(renamed.of('decide_approval')).toEqual(['payments:approve']);
    expect(renamed.supported).toEqual(['payments:approve', 'tools:read', 'tools:write']);
  });
});

test('a token grants the words of its scope claim and the entries of an scp array', () => {
  expect([...scopesGrantedBy({ scope: 'tools:read  tools:write', scp: ['extra', 3] })].sort()).toEqual([
    'extra',
    'tools:read',
    'tools:write',
  ]);
});

describe('the --oauth-* flags', () => {
  test('--oauth-tool-scope gives a tool its own scopes', () => {
    const options = mcpOAuthOptionsOf(
      { 'oauth-issuer': 'https://login.example', 'oauth-tool-scope': ['wire=payments:write,tools:write'] },
      ['add'],
      {},
    );
    expect(options).toMatchObject({
      issuer: 'https://login.example',
      scopes: { perTool: { wire: ['payments:write', 'tools:write'] } },
    });
  });

  test('--oauth-token-type (or its variable) names the typ tokens must carry; none leaves the default at+jwt', () => {
    const issuer = { 'oauth-issuer': 'https://login.example' };
    expect(mcpOAuthOptionsOf({ ...issuer, 'oauth-token-type': 'JWT' }, [], {})).toMatchObject({ tokenType: 'JWT' });
    expect(mcpOAuthOptionsOf(issuer, [], { DURABLE_TOOLS_MCP_OAUTH_TOKEN_TYPE: 'JWT' })).toMatchObject({
      tokenType: 'JWT',
    });
    expect(mcpOAuthOptionsOf(issuer, [], {})).not.toHaveProperty('tokenType');
  });

  test('an --oauth-* option without an issuer is refused', () => {
    expect(mcpOAuthOptionsOf({ 'oauth-audience': 'https://mcp.example/mcp' }, [], {})).toContain('--oauth-issuer');
  });

  const env = { DURABLE_TOOLS_MCP_OAUTH_ISSUER: 'https://login.example' };

  test('the issuer may come from the environment', () => {
    expect(mcpOAuthModeOf({}, { stdio: false, staticTokens: false }, env)).toMatchObject({
      issuer: 'https://login.example',
    });
  });

  test('OAuth with static tokens is refused as exclusive', () => {
    expect(mcpOAuthModeOf({}, { stdio: false, staticTokens: true }, env)).toContain('exclusive');
  });
});

test('list_pending_approvals may be called with the read scope or the approvals scope alone, nothing else with the latter', () => {
  const scopes = mcpToolScopes();
  expect(scopes.allows('list_pending_approvals', new Set(['tools:read']))).toBe(true);
  expect(scopes.allows('list_pending_approvals', new Set(['approvals']))).toBe(true);
  expect(scopes.allows('list_pending_approvals', new Set(['tools:write']))).toBe(false);
  expect(scopes.allows('get_agent_run', new Set(['approvals']))).toBe(false);
  expect(scopes.allows('create_order', new Set(['approvals']))).toBe(false);
});
