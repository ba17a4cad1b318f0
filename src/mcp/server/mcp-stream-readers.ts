import type { AgentRunStreamReader, AgentRunStreamReaders } from '../../client/agent-run-stream-readers';
import { sameSecret } from '../../net/http-guard';
import { McpConfigError } from '../client/mcp-config-error';
import { DEFAULT_MCP_SERVER_NAME, isMcpAgentRunOf, isMcpCallOf, mcpCallerScope, type McpCaller } from './mcp-caller';
import type { McpNamedToken } from './mcp-caller-auth';
import { createMcpAccessTokenVerifier, type McpAccessTokenVerifierOptions } from './mcp-oauth-verifier';

/** Options of {@link mcpStreamReaders}: the MCP server whose callers read, and how they authenticate there. */
export interface McpStreamReadersOptions {
  /** The MCP server's name (`--name` of `durable-tools mcp`; default `durable-tools`): part of every caller's scope. */
  serverName?: string;
  /** The server's static tokens (`DURABLE_TOOLS_MCP_TOKEN(S)`): each its caller, `token:<name>`. */
  tokens?: readonly McpNamedToken[];
  /** The server's OAuth issuer and audience: an access token for the MCP server is the caller's here too. */
  oauth?: McpAccessTokenVerifierOptions;
}

/**
 * The callers of an MCP server as readers of the run stream server (`readers` of `startAgentRunStreamServer`): a
 * static token's caller or an OAuth access token's subject reads the runs it started through that server
 * (`start_agent_run`), their sub-agents, and its own tool calls; any other run is answered as one that does not
 * exist. The same identity as at the MCP server: the same tokens, the same scope.
 *
 * @throws {@link McpConfigError} `INVALID_CONFIG` without tokens nor OAuth, or with both.
 */
export function mcpStreamReaders(options: McpStreamReadersOptions): AgentRunStreamReaders {
  const serverName = options.serverName ?? DEFAULT_MCP_SERVER_NAME;
  const tokens = options.tokens ?? [];
  if (tokens.length > 0 === (options.oauth !== undefined)) {
    throw new McpConfigError(
      'The MCP callers who read run streams authenticate with static tokens or OAuth: give one of them.',
      'INVALID_CONFIG',
    );
  }
  const readerOf = (caller: McpCaller): AgentRunStreamReader => {
    const scope = mcpCallerScope(serverName, caller);
    return {
      id: `mcp:${scope}`,
      mayRead: ({ rootWorkflowId }) => isMcpAgentRunOf(scope, rootWorkflowId) || isMcpCallOf(scope, rootWorkflowId),
    };
  };
  if (options.oauth) {
    const verifier = createMcpAccessTokenVerifier(options.oauth);
    return async (token) => {
      const checked = await verifier.verify(token);
      return checked.ok ? readerOf(checked.caller) : undefined;
    };
  }
  const known = tokens.map((t) => ({ ...t }));
  return (token) => {
    let match: McpNamedToken | undefined;
    // Every token is compared, in constant time, whichever matches.
    for (const candidate of known) if (sameSecret(token, candidate.token)) match = candidate;
    return match ? readerOf({ subject: `token:${match.name}` }) : undefined;
  };
}
