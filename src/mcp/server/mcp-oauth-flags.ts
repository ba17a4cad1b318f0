import { MCP_TOKEN_ENV } from './mcp-caller-auth';
import type { McpOAuthOptions } from './mcp-oauth-resource';

/** Environment variables of the OAuth mode of `durable-tools mcp` (the flags take precedence). */
export const MCP_OAUTH_ENV = {
  issuer: 'DURABLE_TOOLS_MCP_OAUTH_ISSUER',
  audience: 'DURABLE_TOOLS_MCP_OAUTH_AUDIENCE',
  resource: 'DURABLE_TOOLS_MCP_OAUTH_RESOURCE',
  tokenType: 'DURABLE_TOOLS_MCP_OAUTH_TOKEN_TYPE',
} as const;

/** The OAuth flags of `durable-tools mcp`, as `parseArgs` gives them. */
export interface McpOAuthFlags {
  'oauth-issuer'?: string;
  'oauth-audience'?: string;
  'oauth-resource'?: string;
  'oauth-token-type'?: string;
  'oauth-read-scope'?: string;
  'oauth-write-scope'?: string;
  'oauth-approvals-scope'?: string;
  'oauth-tool-scope'?: string[];
}

/** The `parseArgs` options of {@link McpOAuthFlags}. */
export const MCP_OAUTH_ARG_OPTIONS = {
  'oauth-issuer': { type: 'string' },
  'oauth-audience': { type: 'string' },
  'oauth-resource': { type: 'string' },
  'oauth-token-type': { type: 'string' },
  'oauth-read-scope': { type: 'string' },
  'oauth-write-scope': { type: 'string' },
  'oauth-approvals-scope': { type: 'string' },
  'oauth-tool-scope': { type: 'string', multiple: true },
} as const;

/** Usage lines of the OAuth flags. */
export const MCP_OAUTH_USAGE = `  --oauth-issuer URL  serve as an OAuth resource server: JWT access tokens of this issuer (its keys are found by
                      OIDC discovery or RFC 8414 metadata); exclusive with static tokens
  --oauth-audience U  the aud tokens must contain (default the resource URL)
  --oauth-resource U  the endpoint's public URL, the metadata's resource (default http://HOST:PORT/mcp)
  --oauth-token-type T  the typ every token's header must carry (default at+jwt, RFC 9068; JWT for issuers such
                      as Keycloak or Entra ID that type their access tokens JWT)
  --oauth-read-scope S   scope of read-only tools (default tools:read)
  --oauth-write-scope S  scope of every other tool (default tools:write)
  --oauth-approvals-scope S  scope of approvers: see every caller's waiting calls, decide_approval (default approvals)
  --oauth-tool-scope T=S1,S2  the scopes tool T needs instead (repeatable)`;

/**
 * The OAuth options the flags and environment ask for (`readOnlyTools` are the tools needing the read scope),
 * undefined without an issuer, or what is wrong with them.
 */
export function mcpOAuthOptionsOf(
  flags: McpOAuthFlags,
  readOnlyTools: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): McpOAuthOptions | undefined | string {
  const issuer = flags['oauth-issuer'] ?? (env[MCP_OAUTH_ENV.issuer] || undefined);
  const audience = flags['oauth-audience'] ?? (env[MCP_OAUTH_ENV.audience] || undefined);
  const resource = flags['oauth-resource'] ?? (env[MCP_OAUTH_ENV.resource] || undefined);
  const tokenType = flags['oauth-token-type'] ?? (env[MCP_OAUTH_ENV.tokenType] || undefined);
  const others = [
    audience,
    resource,
    tokenType,
    flags['oauth-read-scope'],
    flags['oauth-write-scope'],
    flags['oauth-approvals-scope'],
    flags['oauth-tool-scope'],
  ];
  if (issuer === undefined) {
    return others.some((value) => value !== undefined)
      ? `The --oauth-* options need --oauth-issuer (or ${MCP_OAUTH_ENV.issuer}).`
      : undefined;
  }
  const perTool: Record<string, string[]> = {};
  for (const entry of flags['oauth-tool-scope'] ?? []) {
    const match = /^([^=\s]+)=(\S+)$/.exec(entry);
    if (!match) return `--oauth-tool-scope takes tool=scope[,scope...], not "${entry}".`;
    perTool[match[1]!] = match[2]!.split(',').filter((scope) => scope !== '');
  }
  return {
    issuer,
    ...(audience !== undefined ? { audience } : {}),
    ...(resource !== undefined ? { resource } : {}),
    ...(tokenType !== undefined ? { tokenType } : {}),
    scopes: {
      readOnlyTools,
      perTool,
      ...(flags['oauth-read-scope'] !== undefined ? { read: flags['oauth-read-scope'] } : {}),
      ...(flags['oauth-write-scope'] !== undefined ? { write: flags['oauth-write-scope'] } : {}),
      ...(flags['oauth-approvals-scope'] !== undefined ? { approvals: flags['oauth-approvals-scope'] } : {}),
    },
  };
}

/**
 * The OAuth mode the flags ask for (its options without the read-only tools, known once the tools are loaded),
 * undefined for none, or why it cannot be: a flag's mistake, OAuth on stdio, OAuth with static tokens.
 */
export function mcpOAuthModeOf(
  flags: McpOAuthFlags,
  command: { stdio: boolean; staticTokens: boolean },
  env: NodeJS.ProcessEnv = process.env,
): McpOAuthOptions | undefined | string {
  const asked = mcpOAuthOptionsOf(flags, [], env);
  if (typeof asked !== 'object') return asked;
  if (command.stdio) return 'OAuth serves HTTP only: --oauth-issuer needs --http.';
  if (command.staticTokens) {
    return `OAuth (--oauth-issuer) and static tokens (${MCP_TOKEN_ENV.token}, ${MCP_TOKEN_ENV.tokens}) are exclusive: configure one of them.`;
  }
  return asked;
}
