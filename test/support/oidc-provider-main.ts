/**
 * A real OpenID provider (the `oidc-provider` package) for the OAuth tests of the MCP server, run as
 * `node --import tsx test/support/oidc-provider-main.ts` (the package is an ES module that Jest cannot load). It
 * listens on a free port of 127.0.0.1, issues JWT access tokens by the client-credentials grant for any resource
 * indicator (its audience), and prints `issuer <issuer>` then {@link OIDC_PROVIDER_READY}. Its configuration is the JSON of
 * `OIDC_TEST_PROVIDER` ({@link OidcTestProviderConfig}). Runs until killed.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The configuration the provider process reads. */
export interface OidcTestProviderConfig {
  /** The private signing key (a JWK with `kid`): two providers given the same key sign alike. */
  signingKey: Record<string, unknown>;
  /** Client-credentials clients: id, secret, the scopes they may ask for. */
  clients: { id: string; secret: string; scope: string }[];
  /** Clients whose access tokens are minted already expired (`exp` an hour in the past). */
  expiredClients?: string[];
  /** The lifetime of the access tokens of some clients, in seconds (default 600). */
  accessTokenTtlSeconds?: Record<string, number>;
  /**
   * The person some clients act for: their tokens' `sub` (default the client id), as an app a user signed in to
   * would get it. Two clients of one subject are one person through two apps.
   */
  subjects?: Record<string, string>;
}

/** The environment variable holding the JSON configuration. */
export const OIDC_TEST_PROVIDER_ENV = 'OIDC_TEST_PROVIDER';

/** The line printed once the provider answers (after its issuer's). */
export const OIDC_PROVIDER_READY = 'OIDC_PROVIDER_READY';

async function main(): Promise<void> {
  const config = JSON.parse(process.env[OIDC_TEST_PROVIDER_ENV] ?? '') as OidcTestProviderConfig;
  const { default: Provider } = await import('oidc-provider');
  // Requests are answered once the provider exists; it needs the port in its issuer first.
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const expired = new Set(config.expiredClients ?? []);
  const scopes = [...new Set(config.clients.flatMap((c) => c.scope.split(' ')))];
  const provider = new Provider(issuer, {
    clients: config.clients.map((c) => ({
      client_id: c.id,
      client_secret: c.secret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      scope: c.scope,
    })),
    jwks: { keys: [config.signingKey] },
    scopes,
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, _resource: string, client: { clientId: string }) => ({
          scope: scopes.join(' '),
          accessTokenTTL: config.accessTokenTtlSeconds?.[client.clientId] ?? 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    formats: {
      customizers: {
        jwt: (_ctx: unknown, token: { clientId?: string }, jwt: { payload: Record<string, number | string> }) => {
          const subject = config.subjects?.[String(token.clientId)];
          if (subject !== undefined) jwt.payload.sub = subject;
          if (!expired.has(String(token.clientId))) return;
          const now = Math.floor(Date.now() / 1000);
          jwt.payload.iat = now - 7200;
          jwt.payload.exp = now - 3600;
        },
      },
    },
  });
  server.on('request', provider.callback());
  console.log(`issuer ${issuer}`);
  console.log(OIDC_PROVIDER_READY);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
