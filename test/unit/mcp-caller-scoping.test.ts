import type { IncomingMessage } from 'node:http';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { isMcpCallOf, mcpCallerScope, mcpCallWorkflowIdIn, SHARED_MCP_CALLER } from '../../src/mcp/server/mcp-caller';
import { mcpTokensFromEnv, staticTokenAuthenticator } from '../../src/mcp/server/mcp-caller-auth';
import { McpConfigError } from '../../src/mcp/client/mcp-config-error';
import { mcpIdempotencyKeyOf } from '../../src/mcp/server/mcp-idempotency-key';
import { bearerTokenOf, isLoopbackHost } from '../../src/net/http-guard';

const OURS = 'io.durable-tools/idempotency-key';

function refusal(run: () => unknown): McpError {
  try {
    run();
  } catch (error) {
    if (error instanceof McpError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('the idempotency key of a tools/call', () => {
  test('is read from params.idempotencyKey (SEP-3182)', () => {
    expect(mcpIdempotencyKeyOf({ idempotencyKey: 'k1' })).toBe('k1');
  });

  test('is read from _meta.idempotencyKey, what MCP clients send', () => {
    expect(mcpIdempotencyKeyOf({ _meta: { idempotencyKey: 'k2' } })).toBe('k2');
  });

  test('is read from our _meta name', () => {
    expect(mcpIdempotencyKeyOf({ _meta: { [OURS]: 'k3' } })).toBe('k3');
  });

  test('may be sent in several places when they agree', () => {
    expect(mcpIdempotencyKeyOf({ idempotencyKey: 'k', _meta: { idempotencyKey: 'k', [OURS]: 'k' } })).toBe('k');
  });

  test('is absent when no place carries one', () => {
    expect(mcpIdempotencyKeyOf({ _meta: { progressToken: 1 } })).toBeUndefined();
  });

  test('two different keys in one call are refused with InvalidParams naming both places', () => {
    const error = refusal(() => mcpIdempotencyKeyOf({ idempotencyKey: 'a', _meta: { [OURS]: 'b' } }));
    expect(error.code).toBe(ErrorCode.InvalidParams);
    expect(error.message).toContain('Two different idempotency keys');
    expect(error.message).toContain('params.idempotencyKey');
    expect(error.message).toContain(OURS);
  });

  test('a key that is not a non-empty string of at most 1,000 characters is refused, not ignored', () => {
    for (const bad of [42, '', 'x'.repeat(1_001), { k: 1 }]) {
      expect(refusal(() => mcpIdempotencyKeyOf({ _meta: { idempotencyKey: bad } })).code).toBe(ErrorCode.InvalidParams);
    }
  });
});

describe('caller scopes', () => {
  test('differ between callers, client ids and server names, and are stable', () => {
    const scopes = [
      mcpCallerScope('s', { subject: 'token:alice' }),
      mcpCallerScope('s', { subject: 'token:bob' }),
      mcpCallerScope('s', { subject: 'token:alice', clientId: 'app' }),
      mcpCallerScope('other', { subject: 'token:alice' }),
      mcpCallerScope('s', SHARED_MCP_CALLER),
    ];
    expect(new Set(scopes).size).toBe(scopes.length);
    expect(mcpCallerScope('s', { subject: 'token:alice' })).toBe(scopes[0]);
  });

  test('put two callers with the same key on two workflow ids of bounded length', () => {
    const key = 'k'.repeat(1_000);
    const alice = mcpCallWorkflowIdIn(mcpCallerScope('s', { subject: 'a'.repeat(5_000) }), key);
    const bob = mcpCallWorkflowIdIn(mcpCallerScope('s', { subject: 'token:bob' }), key);
    expect(alice).not.toBe(bob);
    expect(alice.length).toBeLessThanOrEqual(80);
    expect(isMcpCallOf(mcpCallerScope('s', { subject: 'token:bob' }), alice)).toBe(false);
    expect(isMcpCallOf(mcpCallerScope('s', { subject: 'token:bob' }), bob)).toBe(true);
  });
});

describe('static MCP tokens', () => {
  test('DURABLE_TOOLS_MCP_TOKENS names several callers, DURABLE_TOOLS_MCP_TOKEN one called default', () => {
    expect(mcpTokensFromEnv({ DURABLE_TOOLS_MCP_TOKEN: 't0', DURABLE_TOOLS_MCP_TOKENS: 'alice:t1, bob:t:2' })).toEqual([
      { name: 'default', token: 't0' },
      { name: 'alice', token: 't1' },
      { name: 'bob', token: 't:2' },
    ]);
    expect(mcpTokensFromEnv({})).toEqual([]);
  });

  test('an entry without a name or token, or a repeated name or token, is a configuration error', () => {
    for (const tokens of ['alice', ':t', 'alice:', 'a b:t', 'alice:t,alice:u', 'alice:t,bob:t']) {
      expect(() => mcpTokensFromEnv({ DURABLE_TOOLS_MCP_TOKENS: tokens })).toThrow(McpConfigError);
    }
  });

  test('a configuration error never prints a token', () => {
    expect(() => mcpTokensFromEnv({ DURABLE_TOOLS_MCP_TOKENS: 'alice:s3cret-value,alice:s3cret-value' })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('s3cret') }),
    );
  });

  test('each token authenticates its own caller; a bare token, another scheme or a wrong token none', () => {
    const authenticate = staticTokenAuthenticator([
      { name: 'alice', token: 'ta' },
      { name: 'bob', token: 'tb' },
    ]);
    const as = (authorization?: string) =>
      authenticate({ headers: authorization === undefined ? {} : { authorization } } as IncomingMessage);
    expect(as('Bearer ta')).toEqual({ subject: 'token:alice' });
    expect(as('bearer tb')).toEqual({ subject: 'token:bob' });
    for (const bad of [undefined, 'ta', 'Basic ta', 'Bearer tc', 'Bearer ta extra', 'Bearer ']) {
      expect(as(bad)).toBeUndefined();
    }
  });
});

describe('the HTTP guard', () => {
  test('knows loopback interfaces from the others', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', 'localhost', '::1', '[::1]']) expect(isLoopbackHost(host)).toBe(true);
    for (const host of ['0.0.0.0', '::', '192.168.1.4', 'example.com', '10.0.0.1']) {
      expect(isLoopbackHost(host)).toBe(false);
    }
  });

  test('reads a bearer token only from the Bearer scheme', () => {
    expect(bearerTokenOf('Bearer abc')).toBe('abc');
    expect(bearerTokenOf('abc')).toBeUndefined();
    expect(bearerTokenOf(undefined)).toBeUndefined();
  });
});
