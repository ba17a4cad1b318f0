import type { AuthorizationServerMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/client';
import type { JWK } from 'jose';
import { clientAssertion, JWT_BEARER_ASSERTION_TYPE } from './mcp-oauth-assertion';
import { errorName } from './mcp-oauth-discovery';
import { McpOAuthError } from './mcp-oauth-error';

/** Characters of an authorization server's `error_description` kept in a message. */
const DESCRIPTION_MAX_CHARS = 200;

/**
 * The client-credentials grant (RFC 6749 §4.4) of a client that authenticates with `private_key_jwt` (RFC 7523):
 * a fresh signed assertion per request, the RFC 8707 `resource`, the `scope` when given.
 *
 * @throws {@link McpOAuthError} `TOKEN_REFUSED` (an OAuth error answer, or no valid token), or the transient
 * `AUTHORIZATION_SERVER_UNAVAILABLE` (unreachable, 5xx).
 */
export async function privateKeyJwtClientCredentials(options: {
  metadata: AuthorizationServerMetadata;
  issuer: string;
  clientId: string;
  jwk: JWK;
  resource: string;
  scope?: string;
  where: string;
  fetch: FetchLike;
}): Promise<OAuthTokens> {
  const { metadata, issuer, where } = options;
  const body = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: options.clientId,
    client_assertion_type: JWT_BEARER_ASSERTION_TYPE,
    client_assertion: await clientAssertion(options.clientId, metadata.issuer, options.jwk),
    resource: options.resource,
    ...(options.scope ? { scope: options.scope } : {}),
  });
  let response: Response;
  try {
    response = await options.fetch(metadata.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: body.toString(),
    });
  } catch (error) {
    throw new McpOAuthError(
      `${where}: the token endpoint of ${issuer} could not be reached (${errorName(error)}).`,
      'AUTHORIZATION_SERVER_UNAVAILABLE',
    );
  }
  const answer = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (response.status >= 500 || answer.error === 'server_error') {
    throw new McpOAuthError(
      `${where}: the token endpoint of ${issuer} failed (HTTP ${response.status}).`,
      'AUTHORIZATION_SERVER_UNAVAILABLE',
    );
  }
  if (!response.ok || typeof answer.access_token !== 'string' || typeof answer.token_type !== 'string') {
    const code = typeof answer.error === 'string' ? answer.error : `HTTP ${response.status}`;
    const description =
      typeof answer.error_description === 'string'
        ? `: ${answer.error_description.slice(0, DESCRIPTION_MAX_CHARS)}`
        : '';
    throw new McpOAuthError(
      `${where}: the authorization server ${issuer} refused the token request (${code}${description}).`,
      'TOKEN_REFUSED',
    );
  }
  return answer as unknown as OAuthTokens;
}
