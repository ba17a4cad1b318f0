import type { AuthorizationServerMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/client';
import type { JWK } from 'jose';
import type { McpOAuthSettings } from './mcp-oauth-config';
import { errorName } from './mcp-oauth-discovery';
import { McpOAuthError } from './mcp-oauth-error';
import { publicJwkOf } from './mcp-oauth-assertion';

/** Characters of a registration endpoint's `error_description` kept in a message. */
const DESCRIPTION_MAX_CHARS = 200;

/** How the worker is known to an authorization server it registered with (held in memory, per issuer). */
export interface McpRegisteredClient {
  clientId: string;
  /** Issued by dynamic registration to a client without a key (`client_secret_basic`). */
  clientSecret?: string;
  authMethod: 'private_key_jwt' | 'client_secret_basic' | 'client_secret_post';
  /** `client-id-metadata-document`: the client id is the document's URL; `dynamic-registration`: RFC 7591. */
  via: 'client-id-metadata-document' | 'dynamic-registration';
}

/**
 * Lets the worker in at an authorization server that does not know it (no `clientId` configured):
 * 1. a Client ID Metadata Document first: when `settings.clientMetadataUrl` is given and the metadata says
 *    `client_id_metadata_document_supported`, the URL is the client id (nothing is sent: the authorization server
 *    fetches the document when the client first authenticates) and the client authenticates with `private_key_jwt`;
 * 2. else dynamic client registration (RFC 7591) at `registration_endpoint`, for the client-credentials grant:
 *    with `privateJwk`, `private_key_jwt` and the public key in `jwks`; without, the secret the server issues;
 * 3. else `REGISTRATION_UNSUPPORTED`: the operator must configure `clientId`.
 *
 * @throws {@link McpOAuthError} `REGISTRATION_UNSUPPORTED`, `REGISTRATION_REFUSED` (4xx), or the transient
 * `AUTHORIZATION_SERVER_UNAVAILABLE` (unreachable, 5xx).
 */
export async function registerOAuthClient(options: {
  metadata: AuthorizationServerMetadata;
  settings: McpOAuthSettings;
  privateJwk?: JWK;
  where: string;
  fetch: FetchLike;
}): Promise<McpRegisteredClient> {
  const { metadata, settings, privateJwk, where } = options;
  const cimd = (metadata as { client_id_metadata_document_supported?: unknown }).client_id_metadata_document_supported;
  if (settings.clientMetadataUrl && privateJwk && cimd === true) {
    return { clientId: settings.clientMetadataUrl, authMethod: 'private_key_jwt', via: 'client-id-metadata-document' };
  }
  const endpoint = metadata.registration_endpoint;
  if (!endpoint) {
    throw new McpOAuthError(
      `${where}: the authorization server ${settings.issuer} offers neither client id metadata documents${settings.clientMetadataUrl ? '' : ' (and oauth.clientMetadataUrl is not set)'} nor dynamic client registration; configure oauth.clientId.`,
      'REGISTRATION_UNSUPPORTED',
    );
  }
  const request = {
    client_name: 'durable-tools worker',
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: privateJwk ? 'private_key_jwt' : 'client_secret_basic',
    ...(privateJwk ? { jwks: { keys: [publicJwkOf(privateJwk)] } } : {}),
    ...(settings.scopes?.length ? { scope: settings.scopes.join(' ') } : {}),
  };
  let response: Response;
  try {
    response = await options.fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(request),
    });
  } catch (error) {
    throw new McpOAuthError(
      `${where}: the registration endpoint of ${settings.issuer} could not be reached (${errorName(error)}).`,
      'AUTHORIZATION_SERVER_UNAVAILABLE',
    );
  }
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (response.status >= 500) {
    throw new McpOAuthError(
      `${where}: the registration endpoint of ${settings.issuer} failed (HTTP ${response.status}).`,
      'AUTHORIZATION_SERVER_UNAVAILABLE',
    );
  }
  if (!response.ok || typeof body.client_id !== 'string') {
    const code = typeof body.error === 'string' ? body.error : `HTTP ${response.status}`;
    const description =
      typeof body.error_description === 'string' ? `: ${body.error_description.slice(0, DESCRIPTION_MAX_CHARS)}` : '';
    throw new McpOAuthError(
      `${where}: the authorization server ${settings.issuer} refused to register the worker (${code}${description}).`,
      'REGISTRATION_REFUSED',
    );
  }
  const method = body.token_endpoint_auth_method;
  return {
    clientId: body.client_id,
    ...(typeof body.client_secret === 'string' ? { clientSecret: body.client_secret } : {}),
    authMethod:
      method === 'client_secret_post' || method === 'private_key_jwt'
        ? method
        : privateJwk
          ? 'private_key_jwt'
          : 'client_secret_basic',
    via: 'dynamic-registration',
  };
}
