import { randomUUID } from 'node:crypto';
import { importJWK, SignJWT, type JWK } from 'jose';
import { McpOAuthError } from './mcp-oauth-error';

/** The `client_assertion_type` of a `private_key_jwt` assertion (RFC 7523). */
export const JWT_BEARER_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** The members of a private JWK that must never leave the worker. */
const PRIVATE_MEMBERS = new Set(['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']);

/**
 * The private JWK a `privateKey` secret holds (JSON), checked to be a private RSA or EC key. The error names the
 * reference, never the value.
 */
export function parsePrivateJwk(text: string, where: string, reference: string): JWK {
  let jwk: JWK;
  try {
    jwk = JSON.parse(text) as JWK;
  } catch {
    throw new McpOAuthError(`${where}: the secret ${reference} is not a JSON Web Key.`, 'SECRET_MISSING');
  }
  if ((jwk.kty !== 'RSA' && jwk.kty !== 'EC') || typeof jwk.d !== 'string') {
    throw new McpOAuthError(
      `${where}: the secret ${reference} is not a private RSA or EC key (JWK).`,
      'SECRET_MISSING',
    );
  }
  return jwk;
}

/** The public half of a private JWK (what a registration or a metadata document publishes in `jwks`). */
export function publicJwkOf(jwk: JWK): JWK {
  return Object.fromEntries(Object.entries(jwk).filter(([name]) => !PRIVATE_MEMBERS.has(name))) as JWK;
}

/** The signing algorithm of a key: its `alg`, else RS256 for RSA and ES256 for EC. */
function algorithmOf(jwk: JWK): string {
  return jwk.alg ?? (jwk.kty === 'EC' ? 'ES256' : 'RS256');
}

/**
 * A `private_key_jwt` client assertion (RFC 7523 §2.2, OpenID Connect Core §9): `iss` and `sub` the client id,
 * `aud` the authorization server's issuer identifier, a fresh `jti`, valid for 60 s.
 */
export async function clientAssertion(clientId: string, audience: string, jwk: JWK): Promise<string> {
  const alg = algorithmOf(jwk);
  const key = await importJWK(jwk, alg);
  return new SignJWT({})
    .setProtectedHeader({ alg, ...(jwk.kid ? { kid: jwk.kid } : {}) })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(audience)
    .setJti(randomUUID())
    .setIssuedAt()
    .setExpirationTime('60s')
    .sign(key);
}
