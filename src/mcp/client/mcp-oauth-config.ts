import { z } from 'zod';

/**
 * Where a secret is read from, never the secret itself: `env:NAME` (an environment variable of the worker) or
 * `file:PATH` (a file's content, trimmed; e.g. a mounted Kubernetes secret). The configuration document, which may
 * be logged or committed, then holds only the reference.
 */
export const mcpSecretReferenceSchema = z
  .string()
  .regex(/^(env:[A-Za-z_][A-Za-z0-9_]*|file:.+)$/, 'a secret reference is env:NAME or file:PATH, never the secret');

/** A secret reference as configured: `env:NAME` or `file:PATH` (see {@link mcpSecretReferenceSchema}). */
export type McpSecretReference = z.output<typeof mcpSecretReferenceSchema>;

/**
 * The OAuth settings of a Streamable HTTP server entry (`oauth`): the worker obtains access tokens from the
 * authorization server `issuer` by the client-credentials grant (`clientSecret`, or `privateKey` for
 * `private_key_jwt`) or a refresh token (`refreshToken`), sends them as `Authorization: Bearer …`, renews them
 * before they expire and once on a 401.
 *
 * - `issuer`: the authorization server's issuer identifier. Its metadata is discovered (RFC 8414
 *   `/.well-known/oauth-authorization-server`, then OpenID `/.well-known/openid-configuration`) and its `issuer`
 *   must equal this one, or no credential is sent.
 * - `tokenEndpoint`: skips discovery (the operator vouches for the endpoint; no metadata, no issuer check).
 * - `clientId`; `clientSecret` (a secret reference): client credentials. Without `refreshToken`, the
 *   client-credentials grant is used and `clientSecret` (or `privateKey`) is required.
 * - `privateKey` (a secret reference to a private JWK, with `alg` or RSA/EC): the client authenticates with a
 *   signed assertion (`private_key_jwt`, RFC 7523) instead of a secret.
 * - No `clientId`: the worker registers itself. With `clientMetadataUrl` (the `https://` address of its Client ID
 *   Metadata Document, which the operator publishes, and `privateKey` for the key that document's `jwks` names)
 *   first, when the issuer's metadata says `client_id_metadata_document_supported`; else by dynamic client
 *   registration (RFC 7591) at its `registration_endpoint` (with `privateKey`: `private_key_jwt` and the public
 *   key in `jwks`; without: the secret the authorization server returns). One registration per issuer.
 * - `refreshToken` (a secret reference): the refresh-token grant (with `clientSecret` for a confidential client).
 * - `scopes`: the scopes asked for (none: the authorization server's default).
 * - `resource`: the RFC 8707 resource indicator sent with every token request (default: the server's `url`).
 * - `refreshBeforeExpiryMs`: how long before its expiry a token is renewed (default 60 s, at most half its
 *   lifetime).
 *
 * A 403 `insufficient_scope` of the server becomes the non-retryable observation `MCP_INSUFFICIENT_SCOPE` naming the
 * missing scope; the worker never asks for more scopes than `scopes` by itself.
 */
export const mcpOAuthSchema = z
  .strictObject({
    issuer: z.url({ protocol: /^https?$/ }),
    tokenEndpoint: z.url({ protocol: /^https?$/ }).optional(),
    clientId: z.string().min(1).optional(),
    clientSecret: mcpSecretReferenceSchema.optional(),
    refreshToken: mcpSecretReferenceSchema.optional(),
    privateKey: mcpSecretReferenceSchema.optional(),
    clientMetadataUrl: z
      .url({ protocol: /^https$/ })
      .refine((url) => new URL(url).pathname.length > 1 && !url.includes('#'), 'an https URL with a path, no fragment')
      .optional(),
    scopes: z.array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'a scope is one word without quotes')).optional(),
    resource: z.url({ protocol: /^https?$/ }).optional(),
    refreshBeforeExpiryMs: z.number().int().nonnegative().optional(),
  })
  .refine(
    (oauth) =>
      oauth.clientId === undefined ||
      oauth.refreshToken !== undefined ||
      oauth.clientSecret !== undefined ||
      oauth.privateKey !== undefined,
    'oauth with clientId needs clientSecret or privateKey (client credentials) or refreshToken',
  )
  .refine(
    (oauth) => oauth.clientId === undefined || oauth.clientMetadataUrl === undefined,
    'oauth.clientMetadataUrl is the client id (a Client ID Metadata Document): give it or clientId, not both',
  )
  .refine(
    (oauth) => oauth.clientMetadataUrl === undefined || oauth.privateKey !== undefined,
    'oauth.clientMetadataUrl needs privateKey: a client known by its metadata document has no shared secret (private_key_jwt)',
  )
  .refine(
    (oauth) => oauth.clientId !== undefined || (oauth.clientSecret === undefined && oauth.refreshToken === undefined),
    'clientSecret and refreshToken belong to a configured clientId; a registered client gets its own',
  )
  .refine(
    (oauth) => oauth.clientId !== undefined || oauth.tokenEndpoint === undefined,
    'registration (no clientId) needs the metadata of the issuer: tokenEndpoint cannot skip discovery then',
  );

/** The `oauth` settings of a server, defaults applied (see {@link mcpOAuthSchema}). */
export type McpOAuthSettings = z.output<typeof mcpOAuthSchema>;

/** The default of `oauth.refreshBeforeExpiryMs`. */
export const DEFAULT_MCP_OAUTH_REFRESH_BEFORE_EXPIRY_MS = 60_000;

/** Whether a header set names `Authorization` (which `oauth` owns). */
export function hasAuthorizationHeader(headers: Readonly<Record<string, string>> | undefined): boolean {
  return Object.keys(headers ?? {}).some((name) => name.toLowerCase() === 'authorization');
}
