import { bearerTokenOf } from '../../net/http-guard';
import { McpConfigError } from '../client/mcp-config-error';
import type { McpCaller } from './mcp-caller';
import { mcpToolScopes, scopesLackedFor, type McpToolScopeOptions } from './mcp-oauth-scopes';
import { createMcpAccessTokenVerifier, type McpAccessTokenVerifier } from './mcp-oauth-verifier';

/** The OAuth resource-server mode of the MCP HTTP listener (MCP authorization, RFC 9728, RFC 8707). */
export interface McpOAuthOptions {
  /** The authorization server's issuer identifier (e.g. `https://login.example.com/realms/tools`). */
  issuer: string;
  /**
   * The MCP endpoint's canonical URL as clients reach it (default the listener's `http://host:port/mcp`; set it
   * behind a proxy): the `resource` of the metadata.
   */
  resource?: string;
  /** The audience tokens must name in `aud` (default `resource`). */
  audience?: string;
  /**
   * The scopes each `tools/call` needs (default `tools:read` for read-only tools, `approvals` for `decide_approval`,
   * `tools:write` otherwise).
   */
  scopes?: McpToolScopeOptions;
  /** Seconds of clock skew tolerated on `exp` and `nbf` (default 30). */
  clockToleranceSeconds?: number;
  /**
   * The `typ` every token's header must carry (default `at+jwt`, RFC 9068); `JWT` for an issuer that types its access
   * tokens so (Keycloak, Entra ID).
   */
  tokenType?: string;
}

/** The RFC 9728 protected resource metadata of the MCP server. */
export interface McpProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported: string[];
  bearer_methods_supported: ['header'];
}

/** An HTTP answer that refuses a request. */
export interface McpHttpRefusal {
  status: number;
  message: string;
  headers: Record<string, string>;
}

/** The path of the protected resource metadata, before the resource's own path (RFC 9728 §3.1). */
export const MCP_PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

/** The OAuth checks of one listener: metadata, token verification, scopes of `tools/call`. */
export interface McpOAuthResourceServer {
  /** The URL of the metadata document, as `resource_metadata` of every challenge names it. */
  readonly metadataUrl: string;
  /** Whether `pathname` is one of the metadata document's paths (root and path-suffixed forms). */
  isMetadataPath(pathname: string): boolean;
  /** The metadata document. */
  metadata(): McpProtectedResourceMetadata;
  /** The caller of a request's `Authorization` header and its scopes, or the 401 (or 503) to answer. */
  authenticate(
    authorization: string | undefined,
  ): Promise<{ caller: McpCaller; scopes: ReadonlySet<string> } | McpHttpRefusal>;
  /** The 403 to answer when the body has a `tools/call` needing a scope the token lacks. */
  authorize(granted: ReadonlySet<string>, body: unknown): McpHttpRefusal | undefined;
}

/**
 * The OAuth resource server of a listener whose MCP endpoint is `endpoint` (used as `resource` unless one is given).
 * A missing token is answered 401 `WWW-Authenticate: Bearer resource_metadata="…", scope="…"`; an invalid,
 * expired, foreign or misdirected one 401 with `error="invalid_token"`; a `tools/call` whose scopes the token lacks
 * 403 with `error="insufficient_scope", scope="<the scopes it needs>"`. No answer quotes the token.
 *
 * @throws {@link McpConfigError} `INVALID_CONFIG` for a bad issuer, resource, audience or scope.
 */
export function createMcpOAuthResourceServer(options: McpOAuthOptions, endpoint: string): McpOAuthResourceServer {
  const resource = options.resource ?? endpoint;
  if (!URL.canParse(resource)) {
    throw new McpConfigError(`The OAuth resource must be an absolute URL, not "${resource}".`, 'INVALID_CONFIG');
  }
  const scopes = mcpToolScopes(options.scopes);
  for (const scope of scopes.supported) {
    if (!/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope)) {
      throw new McpConfigError(
        `An OAuth scope is one word of printable characters without quotes, not "${scope}".`,
        'INVALID_CONFIG',
      );
    }
  }
  const verifier: McpAccessTokenVerifier = createMcpAccessTokenVerifier({
    issuer: options.issuer,
    audience: options.audience ?? resource,
    ...(options.clockToleranceSeconds !== undefined ? { clockToleranceSeconds: options.clockToleranceSeconds } : {}),
    ...(options.tokenType !== undefined ? { tokenType: options.tokenType } : {}),
  });
  const resourceUrl = new URL(resource);
  const resourcePath = resourceUrl.pathname.replace(/\/$/, '');
  const metadataUrl = `${resourceUrl.origin}${MCP_PROTECTED_RESOURCE_METADATA_PATH}${resourcePath}`;
  const metadataPaths = new Set([
    MCP_PROTECTED_RESOURCE_METADATA_PATH,
    `${MCP_PROTECTED_RESOURCE_METADATA_PATH}${resourcePath}`,
    `${MCP_PROTECTED_RESOURCE_METADATA_PATH}/mcp`,
  ]);
  const challenge = (fields: Record<string, string>, status: number, message: string): McpHttpRefusal => ({
    status,
    message,
    headers: {
      'WWW-Authenticate': `Bearer ${Object.entries({ ...fields, resource_metadata: metadataUrl })
        .map(([name, value]) => `${name}="${value}"`)
        .join(', ')}`,
    },
  });
  return {
    metadataUrl,
    isMetadataPath: (pathname) => metadataPaths.has(pathname),
    metadata: () => ({
      resource,
      authorization_servers: [options.issuer],
      scopes_supported: [...scopes.supported],
      bearer_methods_supported: ['header'],
    }),
    authenticate: async (authorization) => {
      const token = bearerTokenOf(authorization);
      if (token === undefined) {
        return challenge({ scope: scopes.requested.join(' ') }, 401, 'A bearer access token is required.');
      }
      const checked = await verifier.verify(token);
      if (checked.ok) return { caller: checked.caller, scopes: checked.scopes };
      if (checked.error === 'unavailable') {
        return {
          status: 503,
          message: `The access token cannot be checked now: ${checked.description}`,
          headers: { 'Retry-After': '30' },
        };
      }
      return challenge({ error: 'invalid_token', error_description: checked.description }, 401, checked.description);
    },
    authorize: (granted, body) => {
      const { needed, missing } = scopesLackedFor(body, scopes, granted);
      if (needed.length === 0) return undefined;
      const description = `This call needs the scope ${missing.join(' ')}.`;
      return challenge(
        { error: 'insufficient_scope', scope: needed.join(' '), error_description: description },
        403,
        description,
      );
    },
  };
}
