import { generateKeyPairSync } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { OIDC_PROVIDER_READY, OIDC_TEST_PROVIDER_ENV, type OidcTestProviderConfig } from './oidc-provider-main';
import { killProcess, spawnScriptProcess } from './worker-process';

/** A real OpenID provider in its own process (see oidc-provider-main.ts). */
export interface OidcTestProvider {
  /** Its issuer identifier, `http://127.0.0.1:<port>`. */
  readonly issuer: string;
  /** A JWT access token for `client` by the client-credentials grant, for `resource` (its `aud`) and `scope`. */
  token(client: string, options: { resource: string; scope?: string }): Promise<string>;
  stop(): Promise<void>;
}

/** A new RSA signing key (private JWK with a `kid`), to give two providers the same keys. */
export function oidcSigningKey(kid = 'test-key'): Record<string, unknown> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid, use: 'sig', alg: 'RS256' };
}

/** Starts an OpenID provider with these clients; a client's secret is its id + `-secret`. */
export async function startOidcTestProvider(
  config: Omit<OidcTestProviderConfig, 'clients' | 'signingKey'> & {
    clients: { id: string; scope: string }[];
    signingKey?: Record<string, unknown>;
  },
): Promise<OidcTestProvider> {
  const full: OidcTestProviderConfig = {
    ...config,
    signingKey: config.signingKey ?? oidcSigningKey(),
    clients: config.clients.map((c) => ({ ...c, secret: `${c.id}-secret` })),
  };
  const { child, output } = await spawnScriptProcess(
    require.resolve('./oidc-provider-main.ts'),
    { [OIDC_TEST_PROVIDER_ENV]: JSON.stringify(full) },
    OIDC_PROVIDER_READY,
  );
  const issuer = /^issuer (\S+)$/m.exec(output)?.[1];
  if (!issuer) throw new Error(`The OpenID provider did not print its issuer: ${output}`);
  return {
    issuer,
    token: (client, options) => clientCredentialsToken(issuer, client, options),
    stop: () => stopProcess(child),
  };
}

/** Starts an OpenID provider for the test file (before all its tests) and stops it after. */
export function useOidcTestProvider(config: Parameters<typeof startOidcTestProvider>[0]): () => OidcTestProvider {
  let provider: OidcTestProvider | undefined;
  beforeAll(async () => {
    provider = await startOidcTestProvider(config);
  });
  afterAll(async () => {
    await provider?.stop();
  });
  return () => {
    if (!provider) throw new Error('The OpenID provider is started only once the beforeAll hooks run.');
    return provider;
  };
}

async function clientCredentialsToken(
  issuer: string,
  client: string,
  options: { resource: string; scope?: string },
): Promise<string> {
  const response = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: {
      Authorization: `Basic ${Buffer.from(`${client}:${client}-secret`).toString('base64')}`,
      'Content-Type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      resource: options.resource,
      ...(options.scope !== undefined ? { scope: options.scope } : {}),
    }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (!response.ok || !body.access_token) {
    throw new Error(`The OpenID provider refused a token for ${client}: ${JSON.stringify(body)}`);
  }
  return body.access_token;
}

function stopProcess(child: ChildProcess): Promise<void> {
  return child.exitCode === null ? killProcess(child) : Promise.resolve();
}
