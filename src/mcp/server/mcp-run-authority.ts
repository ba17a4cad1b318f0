import type { StartAgentRunOptions } from '../../client/agent-run-client';
import type { CallerIdentity } from '../../contract/caller-identity';
import { grantedTools } from '../../contract/run-grant';
import type { RunGrantStore } from '../../stores/audit/run-grant-store';
import type { McpCaller } from './mcp-caller';
import { mcpToolScopes, type McpToolScopeOptions } from './mcp-oauth-scopes';

/**
 * How the MCP server gives each call and run it starts its authority (docs/security.md, "Authority of a run"): the
 * grant it records, before the workflow starts, in the workers' grant store, and which the tool activity enforces
 * whoever schedules a call of that run or of its children.
 */
export interface McpRunAuthorityOptions {
  /** The workers' grant store (their audit store: `createAuditStore()` of the same configuration). */
  grants: RunGrantStore;
  /**
   * The scopes each tool needs, as the listener's `oauth.scopes` say (OAuth mode): a caller may call a tool only when
   * its token grants every scope the tool needs.
   */
  scopes?: McpToolScopeOptions;
  /**
   * The tools named callers may call, by subject (`token:<name>` of a static token, or an OAuth `sub`); a caller not
   * named here may call every tool its scopes allow.
   */
  callerTools?: Readonly<Record<string, readonly string[]>>;
}

/** The tools of a run started by `caller`: those it asked for (all when undefined) that it may call. */
export function mcpGrantedTools(
  catalog: readonly string[],
  options: McpRunAuthorityOptions,
  request: { caller: McpCaller; tokenScopes: ReadonlySet<string> | undefined; requested?: readonly string[] },
): string[] {
  const scopes = request.tokenScopes ? mcpToolScopes(options.scopes ?? {}) : undefined;
  const named = Object.hasOwn(options.callerTools ?? {}, request.caller.subject)
    ? new Set(options.callerTools![request.caller.subject])
    : undefined;
  const mayCall = (tool: string) =>
    (!scopes || scopes.of(tool).every((scope) => request.tokenScopes!.has(scope))) && (!named || named.has(tool));
  return grantedTools(catalog, { ...(request.requested ? { requested: request.requested } : {}), mayCall });
}

/** What a start by the server's caller records: who started it and, with `authority`, the grant of its tools. */
export type McpStarting = (
  tokenScopes: ReadonlySet<string> | undefined,
  requested: readonly string[] | undefined,
) => Pick<StartAgentRunOptions, 'grant'> & { startedBy: CallerIdentity };
