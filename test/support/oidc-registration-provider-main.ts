/**
 * A real OpenID provider (`oidc-provider`) for the registration tests of the worker's OAuth client, run as
 * `node --import tsx test/support/oidc-registration-provider-main.ts` (an ES module Jest cannot load). Like
 * oidc-provider-main.ts it issues JWT access tokens by the client-credentials grant for any resource indicator,
 * and it lets clients that are not configured in it in:
 * - `cimd`: Client ID Metadata Documents (the package's `clientIdMetadataDocument` feature, draft-02): a client id
 *   that is an `https://` URL is the address of the client's metadata, which the provider fetches. The documents
 *   live on `https://<cimdHost>/…`; the provider's `fetch` (its documented hook for outgoing requests) sends those
 *   requests to the test's plain-HTTP server at `cimdOrigin` instead (no TLS certificate in tests, and the
 *   package's own dispatcher refuses loopback addresses by design);
 * - `registration`: OpenID/RFC 7591 dynamic client registration at `/reg`, open (no initial access token).
 * Prints `issuer <issuer>` then {@link OIDC_REGISTRATION_PROVIDER_READY}; runs until killed.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The configuration the provider process reads (JSON in {@link OIDC_REGISTRATION_PROVIDER_ENV}). */
export interface OidcRegistrationProviderConfig {
  /** The private signing key of the access tokens (a JWK with `kid`). */
  signingKey: Record<string, unknown>;
  /** Which ways of letting a client in are enabled. */
  cimd: boolean;
  registration: boolean;
  /** The host client id URLs name (e.g. `worker.test`) and the local origin that serves their documents. */
  cimdHost?: string;
  cimdOrigin?: string;
  /** The scopes clients may ask for. */
  scopes: string[];
}

/** The environment variable holding the JSON configuration. */
export const OIDC_REGISTRATION_PROVIDER_ENV = 'OIDC_REGISTRATION_PROVIDER';

/** The line printed once the provider answers (after its issuer's). */
export const OIDC_REGISTRATION_PROVIDER_READY = 'OIDC_REGISTRATION_PROVIDER_READY';

async function main(): Promise<void> {
  const config = JSON.parse(process.env[OIDC_REGISTRATION_PROVIDER_ENV] ?? '') as OidcRegistrationProviderConfig;
  const { default: Provider } = await import('oidc-provider');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const documentsAt = (url: string) =>
    config.cimdHost && config.cimdOrigin && url.startsWith(`https://${config.cimdHost}/`)
      ? `${config.cimdOrigin}${url.slice(`https://${config.cimdHost}`.length)}`
      : url;
  const provider = new Provider(issuer, {
    clients: [],
    jwks: { keys: [config.signingKey] },
    scopes: config.scopes,
    clientAuthMethods: ['private_key_jwt', 'client_secret_basic', 'client_secret_post'],
    // Outgoing requests (the metadata documents): to the test's server, without the package's dispatcher.
    fetch: (url: string, options: Record<string, unknown>) => {
      const { dispatcher: _ignored, ...rest } = options;
      return fetch(documentsAt(url), rest as RequestInit);
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      ...(config.cimd ? { clientIdMetadataDocument: { enabled: true, ack: 'draft-02' } } : {}),
      ...(config.registration ? { registration: { enabled: true } } : {}),
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: config.scopes.join(' '),
          accessTokenTTL: 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
  });
  server.on('request', provider.callback());
  console.log(`issuer ${issuer}`);
  console.log(OIDC_REGISTRATION_PROVIDER_READY);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
