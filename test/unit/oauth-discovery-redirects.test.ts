/**
 * OAuth discovery never leaves the issuer's origin through a redirect: an issuer (or something in front of it) that
 * answers its metadata URL with a redirect to another host must not make the MCP server's token verifier, nor the
 * worker's token holder, fetch that host's metadata, keys or token endpoint. Two loopback HTTP servers: the issuer
 * and the other host, which counts what it is asked.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { discoverOAuthJwksUri, createMcpAccessTokenVerifier } from '../../src/mcp/server/mcp-oauth-verifier';
import { McpOAuthTokens } from '../../src/mcp/client/mcp-oauth-tokens';
import { closeHttpServer, listenOnFreePort } from '../support/local-server';

interface TestHost {
  url: string;
  /** Paths requested so far. */
  requested: string[];
  server: Server;
}

const hosts: TestHost[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((host) => closeHttpServer(host.server)));
});

/** A loopback server answering with `answer`; `hostname` names it in its URL (`127.0.0.1` or `localhost`). */
async function startHost(
  hostname: string,
  answer: (request: IncomingMessage, response: ServerResponse, self: TestHost) => void,
): Promise<TestHost> {
  const host: TestHost = { url: '', requested: [], server: createServer() };
  host.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    host.requested.push(request.url ?? '');
    answer(request, response, host);
  });
  host.url = `http://${hostname}:${await listenOnFreePort(host.server)}`;
  hosts.push(host);
  return host;
}

const json = (response: ServerResponse, body: unknown) =>
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));

/** Another host that serves metadata claiming to be `issuer()`, with its own keys and token endpoint. */
function impostorOf(issuer: () => string) {
  return startHost('localhost', (request, response, self) => {
    if (request.url === '/jwks') return json(response, { keys: [] });
    if (request.url === '/token') return json(response, { access_token: 'stolen', token_type: 'Bearer' });
    return json(response, {
      issuer: issuer(),
      jwks_uri: `${self.url}/jwks`,
      token_endpoint: `${self.url}/token`,
      response_types_supported: ['code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
    });
  });
}

/** An issuer whose every well-known URL redirects (302) to the same path on `target()`. */
function redirectingIssuer(target: () => string) {
  return startHost('127.0.0.1', (request, response) => {
    response.writeHead(302, { location: `${target()}${request.url ?? '/'}` }).end();
  });
}

describe("the MCP server's token verifier", () => {
  test("does not follow its issuer's metadata to another host, and fetches nothing there", async () => {
    let issuerUrl = '';
    const impostor = await impostorOf(() => issuerUrl);
    const issuer = await redirectingIssuer(() => impostor.url);
    issuerUrl = issuer.url;
    await expect(discoverOAuthJwksUri(issuer.url)).rejects.toThrow(/redirect/i);
    const verifier = createMcpAccessTokenVerifier({ issuer: issuer.url, audience: 'http://127.0.0.1:1/mcp' });
    expect(await verifier.verify('a.b.c')).toMatchObject({ ok: false, error: 'unavailable' });
    expect(issuer.requested.length).toBeGreaterThan(0);
    expect(impostor.requested).toEqual([]);
  });

  test("follows a redirect within the issuer's own origin", async () => {
    const issuer = await startHost('127.0.0.1', (request, response, self) => {
      if (request.url === '/.well-known/openid-configuration') {
        return response.writeHead(301, { location: '/moved/openid-configuration' }).end();
      }
      if (request.url === '/moved/openid-configuration') {
        return json(response, { issuer: self.url, jwks_uri: `${self.url}/jwks` });
      }
      response.writeHead(404).end();
    });
    await expect(discoverOAuthJwksUri(issuer.url)).resolves.toBe(`${issuer.url}/jwks`);
  });
});

describe("the worker's token holder for a protected MCP server", () => {
  test('does not follow its issuer to another host: no metadata is read and no credential is sent there', async () => {
    let issuerUrl = '';
    const impostor = await impostorOf(() => issuerUrl);
    const issuer = await redirectingIssuer(() => impostor.url);
    issuerUrl = issuer.url;
    const tokens = new McpOAuthTokens({
      server: 'tools',
      url: 'http://127.0.0.1:1/mcp',
      settings: { issuer: issuer.url, clientId: 'agent', clientSecret: 'env:MCP_SECRET' },
      env: { MCP_SECRET: 'secret-that-must-stay-home' },
    });
    await expect(tokens.accessToken()).rejects.toThrow();
    expect(issuer.requested.length).toBeGreaterThan(0);
    expect(impostor.requested).toEqual([]);
  });
});
