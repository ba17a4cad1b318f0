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
 * authorization server `issuer` by the client-credentials grant (`clientSecret`) or a refresh token
 * (`refreshToken`), sends them as `Authorization: Bearer …`, renews them before they expire and once on a 401.
 *
 * - `issuer`: the authorization server's issuer identifier. Its metadata is discovered (RFC 8414
 *   `/.well-known/oauth-authorization-server`, then OpenID `/.well-known/openid-configuration`) and its `issuer`
 *   must equal this one, or no credential is sent.
 * - `tokenEndpoint`: skips discovery (the operator vouches for the endpoint; no metadata, no issuer check).
 * - `clientId`; `clientSecret` (a secret reference): client credentials. Without `refreshToken`, the
 *   client-credentials grant is used and `clientSecret` is required.
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
    clientId: z.string().min(1),
    clientSecret: mcpSecretReferenceSchema.optional(),
    refreshToken: mcpSecretReferenceSchema.optional(),
    scopes: z.array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'a scope is one word without quotes')).optional(),
    resource: z.url({ protocol: /^https?$/ }).optional(),
    refreshBeforeExpiryMs: z.number().int().nonnegative().optional(),
  })
  .refine(
    (oauth) => oauth.refreshToken !== undefined || oauth.clientSecret !== undefined,
    'oauth needs clientSecret (client credentials) or refreshToken',
  );

/** The `oauth` settings of a server, defaults applied (see {@link mcpOAuthSchema}). */
export type McpOAuthSettings = z.output<typeof mcpOAuthSchema>;

/** The default of `oauth.refreshBeforeExpiryMs`. */
export const DEFAULT_MCP_OAUTH_REFRESH_BEFORE_EXPIRY_MS = 60_000;

/** Whether a header set names `Authorization` (which `oauth` owns). */
export function hasAuthorizationHeader(headers: Readonly<Record<string, string>> | undefined): boolean {
  return Object.keys(headers ?? {}).some((name) => name.toLowerCase() === 'authorization');
}
