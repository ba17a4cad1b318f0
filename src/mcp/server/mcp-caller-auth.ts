import type { IncomingMessage } from 'node:http';
import { bearerTokenOf, sameSecret } from '../../net/http-guard';
import type { McpCaller } from './mcp-caller';
import { McpConfigError } from '../client/mcp-config-error';

/** One static bearer token and the name its caller gets (`subject` = `token:<name>`). */
export interface McpNamedToken {
  name: string;
  token: string;
}

/**
 * Tells who sent a request: a caller, or undefined to refuse it with 401 (at once or as a promise). The listener
 * calls it on every request, so a session always belongs to the caller who opened it.
 */
export type McpCallerAuthenticator = (
  request: IncomingMessage,
) => McpCaller | undefined | Promise<McpCaller | undefined>;

/** Environment variables holding the MCP server's bearer tokens (never arguments: `ps` would show them). */
export const MCP_TOKEN_ENV = {
  /** One token; its caller is named `default`. */
  token: 'DURABLE_TOOLS_MCP_TOKEN',
  /** Several callers: `name:token,name:token` (names `[A-Za-z0-9._-]`, tokens without commas). */
  tokens: 'DURABLE_TOOLS_MCP_TOKENS',
} as const;

/**
 * The named tokens the environment configures: `DURABLE_TOOLS_MCP_TOKENS=alice:s3cret,bob:0ther` and/or
 * `DURABLE_TOOLS_MCP_TOKEN=t` (named `default`). Empty when neither is set.
 *
 * @throws {@link McpConfigError} `INVALID_CONFIG` for an entry without a name or a token, a repeated name or token.
 */
export function mcpTokensFromEnv(env: NodeJS.ProcessEnv = process.env): McpNamedToken[] {
  const tokens: McpNamedToken[] = [];
  const single = env[MCP_TOKEN_ENV.token];
  if (single) tokens.push({ name: 'default', token: single });
  for (const entry of (env[MCP_TOKEN_ENV.tokens] ?? '').split(',')) {
    if (entry.trim() === '') continue;
    const colon = entry.indexOf(':');
    const name = colon > 0 ? entry.slice(0, colon).trim() : '';
    const token = colon > 0 ? entry.slice(colon + 1).trim() : '';
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(name) || token === '') {
      throw new McpConfigError(
        `${MCP_TOKEN_ENV.tokens} takes name:token pairs separated by commas (names of letters, digits, ".", "_", "-"); an entry is not one.`,
        'INVALID_CONFIG',
      );
    }
    tokens.push({ name, token });
  }
  const names = new Set(tokens.map((t) => t.name));
  const secrets = new Set(tokens.map((t) => t.token));
  if (names.size !== tokens.length || secrets.size !== tokens.length) {
    throw new McpConfigError(
      `Each MCP token needs its own name and its own value (${MCP_TOKEN_ENV.token} is named "default").`,
      'INVALID_CONFIG',
    );
  }
  return tokens;
}

/**
 * An authenticator for static bearer tokens: `Authorization: Bearer <token>` of one of `tokens` makes the caller
 * `{ subject: "token:<name>" }`; anything else is refused. Every token is compared in constant time.
 */
export function staticTokenAuthenticator(tokens: readonly McpNamedToken[]): McpCallerAuthenticator {
  if (tokens.length === 0) throw new McpConfigError('A static token authenticator needs a token.', 'INVALID_CONFIG');
  const known = tokens.map((t) => ({ ...t }));
  return (request) => {
    const given = bearerTokenOf(request.headers.authorization);
    if (given === undefined) return undefined;
    let match: McpNamedToken | undefined;
    for (const candidate of known) if (sameSecret(given, candidate.token)) match = candidate;
    return match ? { subject: `token:${match.name}` } : undefined;
  };
}
