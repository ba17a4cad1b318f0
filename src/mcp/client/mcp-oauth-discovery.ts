import { discoverAuthorizationServerMetadata } from '@modelcontextprotocol/sdk/client/auth.js';
import type { AuthorizationServerMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpOAuthSettings } from './mcp-oauth-config';
import { McpOAuthError } from './mcp-oauth-error';

/**
 * The metadata of the authorization server `settings.issuer`, by the MCP SDK's discovery (RFC 8414
 * `/.well-known/oauth-authorization-server`, then OpenID `/.well-known/openid-configuration`, path forms included),
 * with its `issuer` checked against the configured one before anything else is sent; a minimal document naming
 * `settings.tokenEndpoint` when one is given (nothing is discovered then). `where` starts every message.
 *
 * @throws {@link McpOAuthError} `ISSUER_MISMATCH`, `DISCOVERY_FAILED` (no metadata, no token endpoint), or the
 * transient `AUTHORIZATION_SERVER_UNAVAILABLE` (unreachable, 5xx).
 */
export async function discoverIssuerMetadata(
  settings: Pick<McpOAuthSettings, 'issuer' | 'tokenEndpoint'>,
  where: string,
  base: FetchLike,
): Promise<AuthorizationServerMetadata> {
  const { issuer, tokenEndpoint } = settings;
  // Given a token endpoint, nothing is discovered: the operator vouches for it.
  if (tokenEndpoint) return { issuer, token_endpoint: tokenEndpoint } as AuthorizationServerMetadata;
  // The SDK reads a network failure as a CORS refusal and tries the next URL: remember that it happened.
  let unreachable: unknown;
  const fetchFn: FetchLike = async (url, init) => {
    try {
      return await base(url, init);
    } catch (error) {
      unreachable = error;
      throw error;
    }
  };
  let metadata: AuthorizationServerMetadata | undefined;
  try {
    metadata = await discoverAuthorizationServerMetadata(issuer, { fetchFn });
  } catch (cause) {
    // "HTTP 5xx trying to load … metadata from <url>": the SDK's own words, no body.
    const words = cause instanceof Error && /^HTTP \d{3} /.test(cause.message) ? cause.message : errorName(cause);
    throw new McpOAuthError(
      `${where}: the metadata of the authorization server ${issuer} could not be fetched (${words}).`,
      'AUTHORIZATION_SERVER_UNAVAILABLE',
    );
  }
  if (!metadata && unreachable !== undefined) {
    throw new McpOAuthError(
      `${where}: the authorization server ${issuer} could not be reached (${errorName(unreachable)}).`,
      'AUTHORIZATION_SERVER_UNAVAILABLE',
    );
  }
  if (!metadata) {
    throw new McpOAuthError(
      `${where}: ${issuer} publishes no authorization server metadata (neither RFC 8414 nor OpenID discovery); set oauth.tokenEndpoint or fix oauth.issuer.`,
      'DISCOVERY_FAILED',
    );
  }
  if (!sameIssuer(metadata.issuer, issuer)) {
    throw new McpOAuthError(
      `${where}: the authorization server at ${issuer} says its issuer is "${metadata.issuer}", not the configured "${issuer}"; no credential was sent. Fix oauth.issuer (RFC 8414 requires them to be identical).`,
      'ISSUER_MISMATCH',
    );
  }
  if (!metadata.token_endpoint) {
    throw new McpOAuthError(`${where}: the metadata of ${issuer} names no token endpoint.`, 'DISCOVERY_FAILED');
  }
  return metadata;
}

/** Two issuer identifiers are the same, one trailing `/` aside. */
export function sameIssuer(a: string, b: string): boolean {
  const strip = (text: string) => (text.endsWith('/') ? text.slice(0, -1) : text);
  return strip(a) === strip(b);
}

/** A network error's code or name (never a message that could quote a request). */
export function errorName(error: unknown): string {
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  if (cause && typeof cause.code === 'string') return cause.code;
  return error instanceof Error ? error.name : 'error';
}
