import { fetchToken, refreshAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { OAuthError, ServerError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthorizationServerMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { DEFAULT_MCP_OAUTH_REFRESH_BEFORE_EXPIRY_MS, type McpOAuthSettings } from './mcp-oauth-config';
import { discoverIssuerMetadata, errorName } from './mcp-oauth-discovery';
import { McpOAuthError } from './mcp-oauth-error';
import { readSecretReference } from './mcp-secret-reference';

/** Characters of an authorization server's `error_description` kept in a message. */
const DESCRIPTION_MAX_CHARS = 200;

/** What {@link McpOAuthTokens} needs besides the server's settings. */
export interface McpOAuthTokenOptions {
  /** The server's name in the configuration (messages say `"<server>" oauth`). */
  server: string;
  /** The server's MCP endpoint: the default resource indicator. */
  url: string;
  settings: McpOAuthSettings;
  /** Clock of the expiry (tests inject one). */
  now?: () => number;
  /** Fetch of the discovery and token requests (default: the global fetch at the time of the request). */
  fetch?: FetchLike;
  /** Where `env:NAME` references are read (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
}

/** One access token and when it is renewed. */
interface HeldToken {
  accessToken: string;
  /** When this token is renewed before use (undefined: no known expiry, renewed only after a 401). */
  renewAt?: number;
}

/**
 * The access tokens of one protected MCP server, held in the worker's memory only. {@link accessToken} answers the
 * held token until `refreshBeforeExpiryMs` (at most half its lifetime) before it expires, then obtains a new one;
 * {@link renewAfterRejection} replaces a token the server answered 401 to. Concurrent callers share one request to
 * the authorization server (single-flight). The authorization server's metadata is discovered once and its
 * `issuer` checked before any credential is sent. Tokens and secrets appear in no message: a token is named by
 * {@link reference}.
 */
export class McpOAuthTokens {
  /** How messages name these tokens: `MCP server "<name>" oauth`. */
  readonly reference: string;
  readonly #options: McpOAuthTokenOptions;
  readonly #now: () => number;
  #held: HeldToken | undefined;
  #pending: Promise<HeldToken> | undefined;
  #metadata: Promise<AuthorizationServerMetadata> | undefined;
  /** The refresh token the authorization server last returned (it may rotate it). */
  #refreshToken: string | undefined;

  constructor(options: McpOAuthTokenOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.reference = `MCP server "${options.server}" oauth`;
  }

  /** A token to send now: the held one while it is not due for renewal, else a new one. */
  async accessToken(): Promise<string> {
    const held = this.#held;
    if (held && (held.renewAt === undefined || this.#now() < held.renewAt)) return held.accessToken;
    return (await this.#renew()).accessToken;
  }

  /**
   * A token to send after the server refused `rejected` with 401: a new one, unless another caller renewed the
   * token meanwhile (then that one). A renewal in flight is joined, never doubled.
   */
  async renewAfterRejection(rejected: string): Promise<string> {
    if (this.#pending) return (await this.#pending).accessToken;
    if (this.#held && this.#held.accessToken !== rejected) return this.accessToken();
    this.#held = undefined;
    return (await this.#renew()).accessToken;
  }

  #renew(): Promise<HeldToken> {
    if (this.#pending) return this.#pending;
    const pending = this.#obtain().then((held) => {
      this.#held = held;
      return held;
    });
    this.#pending = pending;
    const clear = () => {
      if (this.#pending === pending) this.#pending = undefined;
    };
    pending.then(clear, clear);
    return pending;
  }

  async #obtain(): Promise<HeldToken> {
    const { settings } = this.#options;
    const metadata = await this.#discovered();
    const where = this.reference;
    const env = this.#options.env ?? process.env;
    const clientSecret = settings.clientSecret ? readSecretReference(settings.clientSecret, where, env) : undefined;
    // Verbatim, not as a parsed URL: `new URL(…).href` adds a "/" exact-match servers refuse (SDK #1968).
    const resource = settings.resource ?? this.#options.url;
    const fetchFn = this.#fetch();
    const startedAt = this.#now();
    let tokens: OAuthTokens;
    try {
      if (settings.refreshToken) {
        const refreshToken = this.#refreshToken ?? readSecretReference(settings.refreshToken, where, env);
        tokens = await refreshAuthorization(settings.issuer, {
          metadata,
          clientInformation: {
            client_id: settings.clientId,
            ...(clientSecret !== undefined ? { client_secret: clientSecret } : {}),
          },
          refreshToken,
          resource,
          fetchFn,
        });
        if (tokens.refresh_token) this.#refreshToken = tokens.refresh_token;
      } else {
        const provider = new ClientCredentialsProvider({
          clientId: settings.clientId,
          clientSecret: clientSecret ?? '',
          clientName: 'durable-tools',
          expectedIssuer: settings.issuer,
          ...(settings.scopes?.length ? { scope: settings.scopes.join(' ') } : {}),
        });
        tokens = await fetchToken(provider, settings.issuer, { metadata, resource, fetchFn });
      }
    } catch (error) {
      throw tokenRequestError(where, settings.issuer, error);
    }
    if (tokens.token_type.toLowerCase() !== 'bearer') {
      throw new McpOAuthError(
        `${where}: the authorization server ${settings.issuer} issued a "${tokens.token_type}" token; only Bearer tokens are supported.`,
        'TOKEN_REFUSED',
      );
    }
    return { accessToken: tokens.access_token, ...this.#renewalOf(tokens, startedAt) };
  }

  /** When a token obtained at `startedAt` is renewed: before `refreshBeforeExpiryMs`, at most half its lifetime. */
  #renewalOf(tokens: OAuthTokens, startedAt: number): { renewAt?: number } {
    const lifetimeMs = lifetimeOf(tokens);
    if (lifetimeMs === undefined) return {};
    const margin = Math.min(
      this.#options.settings.refreshBeforeExpiryMs ?? DEFAULT_MCP_OAUTH_REFRESH_BEFORE_EXPIRY_MS,
      lifetimeMs / 2,
    );
    return { renewAt: startedAt + lifetimeMs - margin };
  }

  /** The fetch of requests to the authorization server (the global one at the time of the request by default). */
  #fetch(): FetchLike {
    return this.#options.fetch ?? ((url, init) => fetch(url, init));
  }

  /** The authorization server's metadata, discovered once (again after a failure) and its issuer checked. */
  #discovered(): Promise<AuthorizationServerMetadata> {
    if (!this.#metadata) {
      const pending = discoverIssuerMetadata(this.#options.settings, this.reference, this.#fetch());
      this.#metadata = pending;
      pending.catch(() => {
        if (this.#metadata === pending) this.#metadata = undefined;
      });
    }
    return this.#metadata;
  }
}

/** A token's lifetime in ms: `expires_in`, else the `exp - iat` of a JWT access token, else unknown. */
function lifetimeOf(tokens: OAuthTokens): number | undefined {
  if (typeof tokens.expires_in === 'number' && Number.isFinite(tokens.expires_in)) return tokens.expires_in * 1000;
  const payload = tokens.access_token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown; iat?: unknown };
    return typeof claims.exp === 'number' && typeof claims.iat === 'number'
      ? (claims.exp - claims.iat) * 1000
      : undefined;
  } catch {
    return undefined;
  }
}

/** What a failed token request becomes: refused (permanent) or unavailable (transient); never quoting a body. */
function tokenRequestError(where: string, issuer: string, error: unknown): McpOAuthError {
  if (error instanceof McpOAuthError) return error;
  if (error instanceof ServerError) {
    // Not an OAuth error answer (a 5xx page, a proxy) or `server_error`: the server may recover.
    const status = /^HTTP (\d{3})/.exec(error.message)?.[1];
    return new McpOAuthError(
      `${where}: the token endpoint of ${issuer} failed${status ? ` (HTTP ${status})` : ' (server_error)'}.`,
      'AUTHORIZATION_SERVER_UNAVAILABLE',
    );
  }
  if (error instanceof OAuthError) {
    const description = error.message ? `: ${error.message.slice(0, DESCRIPTION_MAX_CHARS)}` : '';
    return new McpOAuthError(
      `${where}: the authorization server ${issuer} refused the token request (${error.errorCode}${description}).`,
      'TOKEN_REFUSED',
    );
  }
  if (error instanceof Error && error.name === 'ZodError') {
    return new McpOAuthError(`${where}: the token endpoint of ${issuer} answered no valid token.`, 'TOKEN_REFUSED');
  }
  return new McpOAuthError(
    `${where}: the token endpoint of ${issuer} could not be reached (${errorName(error)}).`,
    'AUTHORIZATION_SERVER_UNAVAILABLE',
  );
}
