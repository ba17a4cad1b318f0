/**
 * How a worker without a configured client id gets into an authorization server, against real OpenID providers
 * (`oidc-provider` 9 in their own processes): a Client ID Metadata Document first (the provider fetches the
 * worker's published document, the client authenticates with `private_key_jwt`), dynamic client registration
 * (RFC 7591) when the provider does not take metadata documents, a secret-based registration without a key, one
 * registration per issuer for several server entries, a provider offering neither refused with a structured error,
 * and an access token of another issuer (metadata that lies about its issuer) refused before it is sent anywhere.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import { classify } from '../../src/failures/classify';
import { publicJwkOf } from '../../src/mcp/client/mcp-oauth-assertion';
import { McpClientPool } from '../../src/mcp/client/mcp-client-pool';
import { parseMcpConfig } from '../../src/mcp/client/mcp-config';
import { McpOAuthError } from '../../src/mcp/client/mcp-oauth-error';
import { oauthToolError } from '../../src/mcp/client/mcp-oauth-tool-errors';
import {
  startDocumentHost,
  startOidcRegistrationProvider,
  type DocumentHost,
  type OidcRegistrationProvider,
} from '../support/oidc-registration-provider';

const SCOPES = ['tools:read', 'tools:write'];
const RESOURCE = 'http://127.0.0.1:9/mcp'; // only the tokens' audience: no request goes there
const CIMD_HOST = 'worker.test';
const CLIENT_ID_URL = `https://${CIMD_HOST}/oauth/client.json`;

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE_JWK = { ...privateKey.export({ format: 'jwk' }), kid: 'worker-1', alg: 'RS256' };
const ENV = { WORKER_KEY: JSON.stringify(PRIVATE_JWK) };

let documents: DocumentHost;
let both: OidcRegistrationProvider;
let registrationOnly: OidcRegistrationProvider;
let neither: OidcRegistrationProvider;
const pools: McpClientPool[] = [];

beforeAll(async () => {
  documents = await startDocumentHost();
  // The worker's Client ID Metadata Document, as its operator publishes it (no secret: its public key).
  documents.publish('/oauth/client.json', {
    client_id: CLIENT_ID_URL,
    client_name: 'durable-tools worker',
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'private_key_jwt',
    jwks: { keys: [publicJwkOf(PRIVATE_JWK)] },
    scope: SCOPES.join(' '),
  });
  const common = { scopes: SCOPES, cimdHost: CIMD_HOST, cimdOrigin: documents.origin };
  [both, registrationOnly, neither] = await Promise.all([
    startOidcRegistrationProvider({ ...common, cimd: true, registration: true }),
    startOidcRegistrationProvider({ ...common, cimd: false, registration: true }),
    startOidcRegistrationProvider({ ...common, cimd: false, registration: false }),
  ]);
});
afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.close()));
  await Promise.all([both?.stop(), registrationOnly?.stop(), neither?.stop(), documents?.stop()]);
});

/** A pool whose entries are protected by `oauth` settings (the MCP URL is only the tokens' resource). */
function poolOf(oauth: Record<string, Record<string, unknown>>): McpClientPool {
  const servers = Object.fromEntries(
    Object.entries(oauth).map(([name, settings]) => [name, { url: RESOURCE, oauth: settings }]),
  );
  const pool = new McpClientPool(parseMcpConfig({ mcpServers: servers }).mcpServers, { oauth: { env: ENV } });
  pools.push(pool);
  return pool;
}

const withDocument = (issuer: string) => ({
  issuer,
  clientMetadataUrl: CLIENT_ID_URL,
  privateKey: 'env:WORKER_KEY',
  scopes: SCOPES,
});

test('a Client ID Metadata Document comes first: the document URL is the client id, the key signs the assertion', async () => {
  const tokens = poolOf({ crm: withDocument(both.issuer) }).oauthTokens('crm')!;
  const fetchedBefore = documents.fetched.length;

  expect(await tokens.registeredClient()).toEqual({
    clientId: CLIENT_ID_URL,
    authMethod: 'private_key_jwt',
    via: 'client-id-metadata-document',
  });
  const claims = decodeJwt(await tokens.accessToken());
  expect(claims).toMatchObject({ client_id: CLIENT_ID_URL, iss: both.issuer, aud: RESOURCE });
  expect(String(claims.scope).split(' ').sort()).toEqual(SCOPES);
  // The provider fetched the document to know the client (the provider also offers registration: not used).
  expect(documents.fetched.slice(fetchedBefore)).toContain('/oauth/client.json');
});

test('dynamic client registration is the fallback where metadata documents are not taken', async () => {
  const tokens = poolOf({ crm: withDocument(registrationOnly.issuer) }).oauthTokens('crm')!;
  const fetchedBefore = documents.fetched.length;

  const registered = await tokens.registeredClient();
  expect(registered).toMatchObject({ authMethod: 'private_key_jwt', via: 'dynamic-registration' });
  expect(registered!.clientId).not.toBe(CLIENT_ID_URL);
  expect(registered!.clientSecret).toBeUndefined(); // a key, no shared secret
  expect(decodeJwt(await tokens.accessToken())).toMatchObject({
    client_id: registered!.clientId,
    iss: registrationOnly.issuer,
    aud: RESOURCE,
  });
  expect(documents.fetched.length).toBe(fetchedBefore);
});

test('without a key, dynamic registration gives a secret and the client-credentials grant uses it', async () => {
  const tokens = poolOf({ crm: { issuer: registrationOnly.issuer, scopes: SCOPES } }).oauthTokens('crm')!;
  const registered = await tokens.registeredClient();
  expect(registered).toMatchObject({ authMethod: 'client_secret_basic', via: 'dynamic-registration' });
  expect(registered!.clientSecret).toEqual(expect.any(String));
  expect(decodeJwt(await tokens.accessToken())).toMatchObject({ client_id: registered!.clientId });
});

test('the entries of one issuer share one registration', async () => {
  const pool = poolOf({
    crm: withDocument(registrationOnly.issuer),
    billing: withDocument(registrationOnly.issuer),
  });
  const [crm, billing] = await Promise.all([
    pool.oauthTokens('crm')!.registeredClient(),
    pool.oauthTokens('billing')!.registeredClient(),
  ]);
  expect(billing!.clientId).toBe(crm!.clientId);
});

test('a provider that offers neither is refused with REGISTRATION_UNSUPPORTED, a permanent PERMISSION_DENIED', async () => {
  const tokens = poolOf({ crm: withDocument(neither.issuer) }).oauthTokens('crm')!;
  const error = await tokens.accessToken().catch((e: unknown) => e);
  expect(error).toBeInstanceOf(McpOAuthError);
  expect(error).toMatchObject({ code: 'REGISTRATION_UNSUPPORTED' });
  expect(classify(oauthToolError('crm', error))).toMatchObject({
    kind: 'permanent',
    code: 'PERMISSION_DENIED',
    message: expect.stringContaining('offers neither client id metadata documents nor dynamic client registration'),
    mayHaveHadEffect: false,
  });
});

describe('token issuer binding', () => {
  let liar: Server;
  let liarUrl: string;
  beforeAll(async () => {
    // Metadata that claims to be its own issuer while naming the real provider's endpoints (a mix-up).
    liar = createServer((req, res) => {
      void fetch(`${registrationOnly.issuer}/.well-known/openid-configuration`)
        .then((response) => response.json() as Promise<Record<string, unknown>>)
        .then((metadata) => {
          if (!req.url?.includes('/.well-known/')) return void res.writeHead(404).end();
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ ...metadata, issuer: liarUrl }));
        });
    });
    await new Promise<void>((resolve) => liar.listen(0, '127.0.0.1', resolve));
    liarUrl = `http://127.0.0.1:${(liar.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => liar.close(() => resolve()));
  });

  test('an access token whose iss is another issuer is refused (ISSUER_MISMATCH), with what to fix', async () => {
    const tokens = poolOf({ crm: { issuer: liarUrl, scopes: SCOPES } }).oauthTokens('crm')!;
    const error = await tokens.accessToken().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ISSUER_MISMATCH' });
    expect((error as Error).message).toContain(`issued an access token of the issuer "${registrationOnly.issuer}"`);
    expect(classify(oauthToolError('crm', error))).toMatchObject({
      kind: 'permanent',
      code: 'PERMISSION_DENIED',
      hint: expect.stringContaining('ISSUER_MISMATCH'),
    });
  });
});
