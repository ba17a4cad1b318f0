import { extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { DurableToolsError } from '../../contract/durable-tools-error';
import type { McpOAuthTokens } from './mcp-oauth-tokens';

/** What stands in a server's error text where it quoted our access token. */
export const REDACTED_TOKEN_TEXT = '[access token]';

/**
 * A protected MCP server answered 403 `insufficient_scope`: the token lacks `scope` (the scopes the server's
 * `WWW-Authenticate` names, space-separated; empty when it named none). Nothing ran.
 */
export class McpInsufficientScopeError extends DurableToolsError<'INSUFFICIENT_SCOPE'> {
  override readonly name = 'McpInsufficientScopeError';
  /** The scopes the server asked for, space-separated ('' when it named none). */
  readonly scope: string;
  /** The server's own `error_description`, if any (cut to 300 characters). */
  readonly description: string | undefined;
  constructor(reference: string, scope: string, description?: string) {
    super(
      `${reference}: the server answered 403 insufficient_scope${scope ? `, asking for the scope ${scope}` : ''}.`,
      'INSUFFICIENT_SCOPE',
    );
    this.scope = scope;
    this.description = description?.slice(0, 300);
  }
}

/**
 * The fetch of a protected server's Streamable HTTP transport: every request carries `Authorization: Bearer` with
 * the current token of `tokens` (renewed before expiry); a 401 renews the token once (single-flight) and sends the
 * request once more; a 403 `insufficient_scope` throws {@link McpInsufficientScopeError} (the SDK's error would
 * lose the header); an error answer that quotes the token has it replaced by {@link REDACTED_TOKEN_TEXT}.
 * `base` defaults to the global fetch at the time of the request (so the worker's request hooks see it).
 */
export function oauthFetch(tokens: McpOAuthTokens, base?: FetchLike): FetchLike {
  const send = (url: string | URL, init: RequestInit | undefined, token: string) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return (base ?? fetch)(url, { ...init, headers });
  };
  return async (url, init) => {
    const first = await tokens.accessToken();
    let sent = first;
    let response = await send(url, init, first);
    if (response.status === 401) {
      await response.body?.cancel().catch(() => {});
      sent = await tokens.renewAfterRejection(first);
      response = await send(url, init, sent);
    }
    if (response.status === 403) {
      const challenge = extractWWWAuthenticateParams(response);
      if (challenge.error === 'insufficient_scope') {
        await response.body?.cancel().catch(() => {});
        throw new McpInsufficientScopeError(
          tokens.reference,
          challenge.scope ?? '',
          describedIn(response.headers.get('www-authenticate')),
        );
      }
    }
    return response.status < 400 ? response : withoutTokens(response, [first, sent]);
  };
}

/** The `error_description` of a `WWW-Authenticate` header. */
function describedIn(header: string | null): string | undefined {
  return header ? /error_description="([^"]*)"/.exec(header)?.[1] : undefined;
}

/** An error answer whose body and headers no longer contain any of `secrets`. */
async function withoutTokens(response: Response, secrets: readonly string[]): Promise<Response> {
  const text = await response.text();
  const scrub = (value: string) => secrets.reduce((out, secret) => out.split(secret).join(REDACTED_TOKEN_TEXT), value);
  const headers = new Headers();
  response.headers.forEach((value, name) => headers.set(name, scrub(value)));
  return new Response(scrub(text), { status: response.status, statusText: response.statusText, headers });
}
