import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { CrossOriginRedirectError, fetchWithinOrigin } from '../../net/fetch-within-origin';
import { isLoopbackHost } from '../../net/http-guard';
import { McpConfigError } from '../client/mcp-config-error';
import type { McpCaller } from './mcp-caller';
import { scopesGrantedBy } from './mcp-oauth-scopes';

/** Options of {@link createMcpAccessTokenVerifier}. */
export interface McpAccessTokenVerifierOptions {
  /** The authorization server's issuer identifier (`iss` of its tokens; discovery starts from it). */
  issuer: string;
  /** The audience every token must name in `aud` (RFC 8707): the MCP server's canonical URL. */
  audience: string;
  /** Seconds of clock skew tolerated on `exp` and `nbf` (default 30). */
  clockToleranceSeconds?: number;
  /**
   * The `typ` the header of every token must carry (default `at+jwt`, RFC 9068; `application/at+jwt` is the same).
   * Set `JWT` for an issuer that types its access tokens `JWT` (Keycloak, Entra ID and others): a token of another
   * type (an ID token, say) is then still refused.
   */
  tokenType?: string;
}

/** The `typ` an access token's header must carry by default (RFC 9068). */
export const MCP_OAUTH_DEFAULT_TOKEN_TYPE = 'at+jwt';

/** What an access token check found. Descriptions never quote the token. */
export type McpAccessTokenCheck =
  | { ok: true; caller: McpCaller; scopes: ReadonlySet<string> }
  | { ok: false; error: 'invalid_token'; description: string }
  | { ok: false; error: 'unavailable'; description: string };

/** Checks JWT access tokens of one authorization server for one audience. */
export interface McpAccessTokenVerifier {
  /** Verifies the token (signature, `iss`, `aud`, `exp`, `nbf`, `sub`); never throws for a bad token. */
  verify(token: string): Promise<McpAccessTokenCheck>;
  /** Finds the issuer's `jwks_uri` (OIDC discovery, else RFC 8414 metadata); the first `verify` does it too. */
  discover(): Promise<string>;
}

/** The default clock skew tolerated on `exp` and `nbf`, in seconds. */
export const MCP_OAUTH_CLOCK_TOLERANCE_SECONDS = 30;

/**
 * A verifier of JWT access tokens: the issuer's keys are found through its metadata (`/.well-known/openid-configuration`,
 * else `/.well-known/oauth-authorization-server`, whose `issuer` must be the configured one), fetched from its
 * `jwks_uri`, cached, and fetched again when a token names an unknown key id. A token is accepted when its signature
 * verifies with one of them (asymmetric algorithms only), `iss` is the issuer, `aud` contains the audience, `exp`
 * and `nbf` hold within the tolerance, its header `typ` is `at+jwt` (or the configured `tokenType`) and `sub` is a
 * non-empty string (an array or a number is refused: it would become another subject once printed). Its caller is `{ subject: sub, clientId: client_id ?? azp }`.
 *
 * @throws {@link McpConfigError} `INVALID_CONFIG` for an issuer or audience that is not an absolute URL, or an issuer
 *   over plain HTTP beyond loopback.
 */
export function createMcpAccessTokenVerifier(options: McpAccessTokenVerifierOptions): McpAccessTokenVerifier {
  secureUrl(options.issuer, 'The OAuth issuer');
  if (!URL.canParse(options.audience)) {
    throw new McpConfigError(
      `The OAuth audience must be an absolute URI, not "${options.audience}".`,
      'INVALID_CONFIG',
    );
  }
  let keys: Promise<JWTVerifyGetKey> | undefined;
  const keySet = (): Promise<JWTVerifyGetKey> => {
    if (!keys) {
      keys = discoverOAuthJwksUri(options.issuer).then((uri) => createRemoteJWKSet(new URL(uri)));
      // A failed discovery is tried again by the next request.
      keys.catch(() => (keys = undefined));
    }
    return keys;
  };
  return {
    discover: () => discoverOAuthJwksUri(options.issuer),
    verify: async (token) => {
      let getKey: JWTVerifyGetKey;
      try {
        getKey = await keySet();
      } catch (error) {
        return { ok: false, error: 'unavailable', description: messageOf(error) };
      }
      try {
        const { payload } = await jwtVerify(token, getKey, {
          issuer: options.issuer,
          audience: options.audience,
          clockTolerance: options.clockToleranceSeconds ?? MCP_OAUTH_CLOCK_TOLERANCE_SECONDS,
          algorithms: ASYMMETRIC_ALGORITHMS,
          requiredClaims: ['exp', 'sub'],
          typ: options.tokenType ?? MCP_OAUTH_DEFAULT_TOKEN_TYPE,
        });
        return checkOfClaims(payload, options.issuer);
      } catch (error) {
        if (
          !(error instanceof errors.JOSEError) ||
          error instanceof errors.JWKSTimeout ||
          error.code === 'ERR_JOSE_GENERIC'
        ) {
          return { ok: false, error: 'unavailable', description: "The authorization server's keys cannot be fetched." };
        }
        return {
          ok: false,
          error: 'invalid_token',
          description: rejectionOf(error, options.tokenType ?? MCP_OAUTH_DEFAULT_TOKEN_TYPE),
        };
      }
    },
  };
}

/**
 * The caller and scopes of a verified token's claims: `{ subject: sub, issuer, clientId: client_id ?? azp }`; refused when
 * `sub` is not a non-empty string (`["alice"]` or `12345` would pass for another subject once printed).
 */
function checkOfClaims(payload: JWTPayload, issuer: string): McpAccessTokenCheck {
  if (typeof payload.sub !== 'string' || payload.sub === '') {
    return {
      ok: false,
      error: 'invalid_token',
      description: 'The access token lacks a valid sub claim (a non-empty string).',
    };
  }
  const clientId = typeof payload['client_id'] === 'string' ? payload['client_id'] : payload['azp'];
  const caller: McpCaller = {
    subject: payload.sub,
    issuer,
    ...(typeof clientId === 'string' ? { clientId } : {}),
  };
  return { ok: true, caller, scopes: scopesGrantedBy(payload) };
}

const ASYMMETRIC_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];

/** Why a token was refused, in words that never quote it. */
function rejectionOf(error: unknown, expectedType: string): string {
  if (error instanceof errors.JWTExpired) return 'The access token has expired.';
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case 'iss':
        return 'The access token was issued by another authorization server.';
      case 'aud':
        return 'The access token is not meant for this resource (aud).';
      case 'nbf':
        return 'The access token is not valid yet.';
      case 'typ':
        return `The access token's header is not typed ${expectedType} (RFC 9068).`;
      default:
        return `The access token lacks a valid ${error.claim} claim.`;
    }
  }
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWSSignatureVerificationFailed) {
    return 'The access token is not signed by the authorization server.';
  }
  if (error instanceof errors.JOSEAlgNotAllowed)
    return 'The access token is signed with an algorithm not accepted here.';
  return 'The access token is not a valid JWT.';
}

/**
 * The `jwks_uri` of an issuer's metadata: `<issuer>/.well-known/openid-configuration` (OpenID Connect discovery),
 * else `<origin>/.well-known/oauth-authorization-server<path>` (RFC 8414). The document's `issuer` must be
 * `configured` exactly. A redirect is followed only within the issuer's origin (scheme, host and port).
 *
 * @throws {@link McpConfigError} `UNREADABLE` when neither answers, `INVALID_CONFIG` for a document of another
 *   issuer, without a `jwks_uri`, a redirect to another origin, or a URL neither HTTPS nor loopback.
 */
export async function discoverOAuthJwksUri(configured: string): Promise<string> {
  const issuer = secureUrl(configured, 'The OAuth issuer');
  const path = issuer.pathname.replace(/\/$/, '');
  const candidates = [
    `${issuer.origin}${path}/.well-known/openid-configuration`,
    `${issuer.origin}/.well-known/oauth-authorization-server${path}`,
  ];
  for (const candidate of candidates) {
    let response: Response;
    try {
      // A redirect to another host never makes that host's metadata (and keys) the issuer's.
      response = await fetchWithinOrigin(candidate, {
        headers: { Accept: 'application/json' },
        signal: AbortSignal.timeout(10_000),
      });
    } catch (error) {
      if (error instanceof CrossOriginRedirectError) {
        throw new McpConfigError(`The metadata at ${candidate}: ${error.message}`, 'INVALID_CONFIG');
      }
      continue;
    }
    if (!response.ok) continue;
    const metadata = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    if (metadata?.['issuer'] !== configured) {
      throw new McpConfigError(
        `The metadata at ${candidate} names another issuer than ${configured}; it is not this authorization server's.`,
        'INVALID_CONFIG',
      );
    }
    const jwksUri = metadata['jwks_uri'];
    if (typeof jwksUri !== 'string') {
      throw new McpConfigError(`The metadata at ${candidate} has no jwks_uri.`, 'INVALID_CONFIG');
    }
    return secureUrl(jwksUri, 'The jwks_uri').href;
  }
  throw new McpConfigError(
    `Cannot fetch the metadata of the OAuth issuer ${configured} (tried ${candidates.join(' and ')}).`,
    'UNREADABLE',
  );
}

/** `value` as a URL, refused unless HTTPS or HTTP on loopback. */
function secureUrl(value: string, what: string): URL {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (!url || !(url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname)))) {
    throw new McpConfigError(
      `${what} must be an https:// URL (http:// on loopback only), not "${value}".`,
      'INVALID_CONFIG',
    );
  }
  return url;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
