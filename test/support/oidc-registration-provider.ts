import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { oidcSigningKey } from './oidc-provider';
import {
  OIDC_REGISTRATION_PROVIDER_ENV,
  OIDC_REGISTRATION_PROVIDER_READY,
  type OidcRegistrationProviderConfig,
} from './oidc-registration-provider-main';
import { killProcess, spawnScriptProcess } from './worker-process';

/** A real OpenID provider that lets unknown clients in (see oidc-registration-provider-main.ts). */
export interface OidcRegistrationProvider {
  readonly issuer: string;
  stop(): Promise<void>;
}

/** Starts the provider in its own process with CIMD and/or dynamic registration enabled. */
export async function startOidcRegistrationProvider(
  config: Omit<OidcRegistrationProviderConfig, 'signingKey'>,
): Promise<OidcRegistrationProvider> {
  const { child, output } = await spawnScriptProcess(
    require.resolve('./oidc-registration-provider-main.ts'),
    { [OIDC_REGISTRATION_PROVIDER_ENV]: JSON.stringify({ ...config, signingKey: oidcSigningKey() }) },
    OIDC_REGISTRATION_PROVIDER_READY,
  );
  const issuer = /^issuer (\S+)$/m.exec(output)?.[1];
  if (!issuer) throw new Error(`The OpenID provider did not print its issuer: ${output}`);
  return { issuer, stop: () => (child.exitCode === null ? killProcess(child) : Promise.resolve()) };
}

/** A plain-HTTP server on 127.0.0.1 publishing JSON documents by path (the worker's client metadata documents). */
export interface DocumentHost {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** The paths fetched, in order. */
  readonly fetched: string[];
  publish(path: string, document: unknown): void;
  stop(): Promise<void>;
}

/** Starts a {@link DocumentHost}. */
export async function startDocumentHost(): Promise<DocumentHost> {
  const documents = new Map<string, string>();
  const fetched: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    fetched.push(path);
    const body = documents.get(path);
    if (body === undefined) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    fetched,
    publish: (path, document) => documents.set(path, JSON.stringify(document)),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
