import { DurableToolsError } from '../../contract/durable-tools-error';

/**
 * Codes of {@link McpOAuthError}:
 * - `ISSUER_MISMATCH`: the authorization server's metadata names another issuer than the configured one (no
 *   credential was sent to it), or it issued an access token (a JWT) whose `iss` is another issuer (not used);
 * - `DISCOVERY_FAILED`: no metadata (RFC 8414 or OpenID) at the issuer, or no token endpoint in it;
 * - `SECRET_MISSING`: a secret reference names an unset variable or an unreadable file;
 * - `TOKEN_REFUSED`: the token endpoint refused the request (`invalid_client`, `invalid_grant`, `invalid_scope`, …);
 * - `REGISTRATION_UNSUPPORTED`: no `clientId` is configured and the authorization server offers neither Client ID
 *   Metadata Documents (for a configured `clientMetadataUrl`) nor dynamic client registration;
 * - `REGISTRATION_REFUSED`: the registration endpoint refused the worker's registration;
 * - `AUTHORIZATION_SERVER_UNAVAILABLE`: the authorization server could not be reached or answered 5xx (transient).
 */
export type McpOAuthErrorCode =
  | 'ISSUER_MISMATCH'
  | 'DISCOVERY_FAILED'
  | 'SECRET_MISSING'
  | 'TOKEN_REFUSED'
  | 'REGISTRATION_UNSUPPORTED'
  | 'REGISTRATION_REFUSED'
  | 'AUTHORIZATION_SERVER_UNAVAILABLE';

/**
 * Obtaining an access token for a protected MCP server failed. Its message names the server, the issuer and the
 * reason, never a token or a secret. Only `AUTHORIZATION_SERVER_UNAVAILABLE` may go away on its own.
 */
export class McpOAuthError extends DurableToolsError<McpOAuthErrorCode> {
  override readonly name = 'McpOAuthError';
  constructor(message: string, code: McpOAuthErrorCode, options: { cause?: unknown } = {}) {
    super(message, code, { cause: options.cause });
  }

  /** Whether trying again later could succeed (the authorization server was unreachable). */
  get transient(): boolean {
    return this.code === 'AUTHORIZATION_SERVER_UNAVAILABLE';
  }
}
