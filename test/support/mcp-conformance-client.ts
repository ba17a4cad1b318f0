/**
 * The worker's MCP client as a client of the MCP conformance suite (`conformance client --command …`): the suite
 * starts its test server, then runs `node --import tsx test/support/mcp-conformance-client.ts <server url>` with the
 * scenario in `MCP_CONFORMANCE_SCENARIO` and, for the auth scenarios, the client's credentials in
 * `MCP_CONFORMANCE_CONTEXT`. It does what a worker does: an `McpHost` with one server entry lists its tools, and
 * each tool the scenario is about is called once, through the same pool, idempotency key and error mapping as a
 * durable call. The configuration is what an operator would write: the issuer is read from the server's
 * protected resource metadata (RFC 9728), a PEM key becomes the JWK the `privateKey` reference names.
 * Exits 0 when every call answered, 1 otherwise (the suite judges what the server saw).
 */
import { createPrivateKey } from 'node:crypto';
import { createMcpHost } from '../../src/mcp/client/mcp-host';

/** The tools each scenario expects to be called, with their arguments. */
const CALLS: Record<string, { tool: string; arguments: Record<string, unknown> }[]> = {
  tools_call: [{ tool: 'add_numbers', arguments: { a: 2, b: 40 } }],
  'sse-retry': [{ tool: 'test_reconnection', arguments: {} }],
};

interface ConformanceContext {
  client_id?: string;
  client_secret?: string;
  private_key_pem?: string;
  signing_algorithm?: string;
}

/** The issuer the server's protected resource metadata names (its first authorization server). */
async function issuerOf(url: string): Promise<string> {
  const { origin, pathname } = new URL(url);
  for (const path of [`/.well-known/oauth-protected-resource${pathname}`, '/.well-known/oauth-protected-resource']) {
    const response = await fetch(`${origin}${path}`);
    if (!response.ok) continue;
    const metadata = (await response.json()) as { authorization_servers?: string[] };
    if (metadata.authorization_servers?.[0]) return metadata.authorization_servers[0];
  }
  throw new Error(`no protected resource metadata at ${url}`);
}

async function oauthOf(url: string, context: ConformanceContext, env: Record<string, string>) {
  if (!context.client_id) return undefined;
  const issuer = await issuerOf(url);
  if (context.private_key_pem) {
    env.CONFORMANCE_KEY = JSON.stringify({
      ...createPrivateKey(context.private_key_pem).export({ format: 'jwk' }),
      alg: context.signing_algorithm ?? 'ES256',
    });
    return { issuer, clientId: context.client_id, privateKey: 'env:CONFORMANCE_KEY' };
  }
  env.CONFORMANCE_SECRET = context.client_secret ?? '';
  return { issuer, clientId: context.client_id, clientSecret: 'env:CONFORMANCE_SECRET' };
}

async function main(): Promise<number> {
  const url = process.argv.at(-1)!;
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as ConformanceContext;
  const env: Record<string, string> = {};
  const oauth = await oauthOf(url, context, env);
  const host = createMcpHost(
    { mcpServers: { conformance: { url, trust: 'trusted', ...(oauth ? { oauth } : {}) } } },
    { oauth: { env }, warn: (line) => console.error(line) },
  );
  try {
    await host.refresh();
    const errors = host.listingErrors();
    if (errors.conformance) throw new Error(errors.conformance);
    const info = await host.pool.connectionInfo('conformance');
    console.log(`negotiated ${info.era} ${info.protocolVersion}; tools: ${host.tools().length}`);
    const calls =
      CALLS[scenario] ??
      (oauth
        ? host
            .tools()
            .slice(0, 1)
            .map((tool) => ({ tool, arguments: {} }))
        : []);
    for (const call of calls) {
      const name = typeof call.tool === 'string' ? call.tool : call.tool.contract.name.replace(/^conformance__/, '');
      const result = await host.pool.callTool('conformance', name, call.arguments, {
        idempotencyKey: `conformance/${scenario}/${name}`,
      });
      console.log(`${name}: ${JSON.stringify(result.content)}`);
    }
    return 0;
  } catch (error) {
    console.error(`conformance client failed: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  } finally {
    await host.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
