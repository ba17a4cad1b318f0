import type { AgentRunStreamReaders } from '../client/agent-run-stream-readers';
import { mcpTokensFromEnv } from '../mcp/server/mcp-caller-auth';
import { MCP_OAUTH_ENV } from '../mcp/server/mcp-oauth-flags';
import { mcpStreamReaders } from '../mcp/server/mcp-stream-readers';
import { stringOption, type OptionSpec, type ParsedValues } from './args';
import { CliUsageError } from './command';

/** The options of `durable-tools stream-server` that admit the MCP server's callers as readers. */
export const STREAM_READER_OPTION_SPEC: OptionSpec = {
  'mcp-server': { type: 'string' },
  'oauth-issuer': { type: 'string' },
  'oauth-audience': { type: 'string' },
  'oauth-token-type': { type: 'string' },
};

/**
 * The readers `--mcp-server <name>` asks for: the callers of that MCP server, by its static tokens
 * (`DURABLE_TOOLS_MCP_TOKEN(S)`) or, with `--oauth-issuer` and `--oauth-audience` (the MCP server's resource URL),
 * its OAuth access tokens; each reads the runs it started through that server. Undefined without `--mcp-server`.
 *
 * @throws {@link CliUsageError} for an `--oauth-*` option without `--mcp-server`, `--mcp-server` with neither tokens
 *   nor an issuer, an issuer without an audience, or both tokens and an issuer.
 */
export function streamReadersOf(
  values: ParsedValues,
  env: Readonly<Record<string, string | undefined>>,
): AgentRunStreamReaders | undefined {
  const serverName = stringOption(values, 'mcp-server');
  const issuer = stringOption(values, 'oauth-issuer') ?? (env[MCP_OAUTH_ENV.issuer] || undefined);
  const audience = stringOption(values, 'oauth-audience') ?? (env[MCP_OAUTH_ENV.audience] || undefined);
  const tokenType = stringOption(values, 'oauth-token-type') ?? (env[MCP_OAUTH_ENV.tokenType] || undefined);
  if (serverName === undefined) {
    if (['oauth-issuer', 'oauth-audience', 'oauth-token-type'].some((name) => values[name] !== undefined)) {
      throw new CliUsageError('The --oauth-* options name how the callers of --mcp-server <name> authenticate.');
    }
    return undefined;
  }
  const tokens = mcpTokensFromEnv(env as NodeJS.ProcessEnv);
  if (issuer !== undefined && tokens.length > 0) {
    throw new CliUsageError('--oauth-issuer and DURABLE_TOOLS_MCP_TOKEN(S) are exclusive, as for the MCP server.');
  }
  if (issuer === undefined && tokens.length === 0) {
    throw new CliUsageError(
      "--mcp-server needs the MCP server's callers: DURABLE_TOOLS_MCP_TOKEN(S), or --oauth-issuer and --oauth-audience.",
    );
  }
  if (issuer !== undefined && audience === undefined) {
    throw new CliUsageError("--oauth-issuer needs --oauth-audience: the MCP server's resource URL its tokens name.");
  }
  return mcpStreamReaders({
    serverName,
    ...(tokens.length > 0 ? { tokens } : {}),
    ...(issuer !== undefined && audience !== undefined
      ? { oauth: { issuer, audience, ...(tokenType !== undefined ? { tokenType } : {}) } }
      : {}),
  });
}
