import { fetchToken, refreshAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { OAuthError, ServerError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthorizationServerMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { DEFAULT_MCP_OAUTH_REFRESH_BEFORE_EXPIRY_MS, type McpOAuthSettings } from './mcp-oauth-config';
import { parsePrivateJwk } from './mcp-oauth-assertion';
import { discoverIssuerMetadata, errorName, sameIssuer } from './mcp-oauth-discovery';
import { privateKeyJwtClientCredentials } from './mcp-oauth-jwt-grant';
import { registerOAuthClient, type McpRegisteredClient } from './mcp-oauth-registration';
import { McpOAuthError } from './mcp-oauth-error';
import { readSecretReference } from './mcp-secret-reference';
import type { JWK } from 'jose';

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
  /** The registrations of a pool, by issuer (and metadata document and key): one per issuer for all its entries. */
  registrations?: Map<string, Promise<McpRegisteredClient>>;
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
  readonly #ownRegistrations = new Map<string, Promise<McpRegisteredClient>>();

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
    const privateJwk = settings.privateKey
      ? parsePrivateJwk(readSecretReference(settings.privateKey, where, env), where, settings.privateKey)
      : undefined;
    const client = await this.#client(metadata, privateJwk);
    // Verbatim, not as a parsed URL: `new URL(…).href` adds a "/" exact-match servers refuse (SDK #1968).
    const resource = settings.resource ?? this.#options.url;
    const fetchFn = this.#fetch();
    const scope = settings.scopes?.length ? settings.scopes.join(' ') : undefined;
    const startedAt = this.#now();
    let tokens: OAuthTokens;
    try {
      if (settings.refreshToken) {
        const refreshToken = this.#refreshToken ?? readSecretReference(settings.refreshToken, where, env);
        tokens = await refreshAuthorization(settings.issuer, {
          metadata,
          clientInformation: {
            client_id: client.clientId,
            ...(client.clientSecret !== undefined ? { client_secret: client.clientSecret } : {}),
          },
          refreshToken,
          resource,
          fetchFn,
        });
        if (tokens.refresh_token) this.#refreshToken = tokens.refresh_token;
      } else if (client.authMethod === 'private_key_jwt' && privateJwk) {
        tokens = await privateKeyJwtClientCredentials({
          metadata,
          issuer: settings.issuer,
          clientId: client.clientId,
          jwk: privateJwk,
          resource,
          ...(scope ? { scope } : {}),
          where,
          fetch: fetchFn,
        });
      } else {
        const provider = new ClientCredentialsProvider({
          clientId: client.clientId,
          clientSecret: client.clientSecret ?? '',
          clientName: 'durable-tools',
          expectedIssuer: settings.issuer,
          ...(scope ? { scope } : {}),
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
    if (!settings.tokenEndpoint) assertTokenIssuer(tokens.access_token, settings.issuer, where);
    return { accessToken: tokens.access_token, ...this.#renewalOf(tokens, startedAt) };
  }

  /**
   * How the worker is known to the issuer: the configured `clientId` (with its secret), else the registration
   * (client id metadata document first, dynamic registration as the fallback), made once per issuer and key and
   * shared by every server entry of the pool that names them (again after a failure).
   */
  async registeredClient(): Promise<McpRegisteredClient | undefined> {
    if (this.#options.settings.clientId !== undefined) return undefined;
    const settings = this.#options.settings;
    const env = this.#options.env ?? process.env;
    const privateJwk = settings.privateKey
      ? parsePrivateJwk(
          readSecretReference(settings.privateKey, this.reference, env),
          this.reference,
          settings.privateKey,
        )
      : undefined;
    return this.#client(await this.#discovered(), privateJwk) as Promise<McpRegisteredClient>;
  }

  #client(
    metadata: AuthorizationServerMetadata,
    privateJwk: JWK | undefined,
  ): Promise<McpRegisteredClient | { clientId: string; clientSecret?: string; authMethod: string }> {
    const { settings } = this.#options;
    if (settings.clientId !== undefined) {
      const env = this.#options.env ?? process.env;
      const clientSecret = settings.clientSecret
        ? readSecretReference(settings.clientSecret, this.reference, env)
        : undefined;
      return Promise.resolve({
        clientId: settings.clientId,
        ...(clientSecret !== undefined ? { clientSecret } : {}),
        authMethod: privateJwk && clientSecret === undefined ? 'private_key_jwt' : 'client_secret_basic',
      });
    }
    const registrations = this.#options.registrations ?? this.#ownRegistrations;
    const key = [settings.issuer, settings.clientMetadataUrl ?? '', settings.privateKey ?? ''].join('\n');
    let pending = registrations.get(key);
    if (!pending) {
      pending = registerOAuthClient({
        metadata,
        settings,
        ...(privateJwk ? { privateJwk } : {}),
        where: this.reference,
        fetch: this.#fetch(),
      });
      registrations.set(key, pending);
      const registered = pending;
      registered.catch(() => {
        if (registrations.get(key) === registered) registrations.delete(key);
      });
    }
    return pending;
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

/**
 * Token issuer binding: an access token that is a JWT (RFC 9068) must name the configured issuer as its `iss`; a
 * token of another issuer is not used (the authorization server answered for someone else). An opaque token, or a
 * JWT without `iss`, says nothing and passes.
 */
function assertTokenIssuer(accessToken: string, issuer: string, where: string): void {
  const iss = jwtClaims(accessToken)?.iss;
  if (typeof iss === 'string' && !sameIssuer(iss, issuer)) {
    throw new McpOAuthError(
      `${where}: the token endpoint of ${issuer} issued an access token of the issuer "${iss}"; it is not used. Fix oauth.issuer or the authorization server.`,
      'ISSUER_MISMATCH',
    );
  }
}

/** The claims of a JWT (not verified: the resource server verifies it), or undefined for an opaque token. */
function jwtClaims(token: string): Record<string, unknown> | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown;
    return typeof claims === 'object' && claims !== null ? (claims as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A token's lifetime in ms: `expires_in`, else the `exp - iat` of a JWT access token, else unknown. */
function lifetimeOf(tokens: OAuthTokens): number | undefined {
  if (typeof tokens.expires_in === 'number' && Number.isFinite(tokens.expires_in)) return tokens.expires_in * 1000;
  const claims = jwtClaims(tokens.access_token);
  return typeof claims?.exp === 'number' && typeof claims.iat === 'number'
    ? (claims.exp - claims.iat) * 1000
    : undefined;
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
