import type { ToolCatalogEntry } from '../../contract/tool-catalog-entry';
import { MCP_APPROVALS_SCOPE } from './mcp-approver-rules';

/** The scopes an OAuth-protected MCP server requires by default: `tools:read` and `tools:write`. */
export const MCP_OAUTH_DEFAULT_SCOPES = { read: 'tools:read', write: 'tools:write' } as const;

/** The tools of the server itself that only read (`start_agent_run` starts a run, so it writes). */
const READ_ONLY_SERVER_TOOLS = ['get_agent_run', 'list_pending_approvals'];

/** The server's tool that needs the approvals scope (and only it) by default. */
const DECIDE_TOOL = 'decide_approval';

/** The server's read-only tool an approver's token (approvals scope alone) may call too: it lists what to decide. */
const LIST_APPROVALS_TOOL = 'list_pending_approvals';

/** Which scopes each `tools/call` needs. */
export interface McpToolScopeOptions {
  /** The scope of a read-only tool (default `tools:read`). */
  read?: string;
  /** The scope of any other tool, and of a tool the server does not know (default `tools:write`). */
  write?: string;
  /** The tools that only read (see {@link mcpReadOnlyToolNames}); every other tool needs the write scope. */
  readOnlyTools?: Iterable<string>;
  /** The scope that makes a token an approver and that `decide_approval` needs (default `approvals`). */
  approvals?: string;
  /** Tools that need other scopes than the default: tool name → every scope it needs. */
  perTool?: Readonly<Record<string, readonly string[]>>;
}

/** The scopes each tool needs, and every scope the server may ask for. */
export interface McpToolScopes {
  /** Every scope a call of `tool` needs (what a 403 challenge names). */
  of(tool: string): readonly string[];
  /**
   * Whether a token granting `granted` may call `tool`: it has every scope of {@link of}, or, for
   * `list_pending_approvals` without scopes of its own, the approvals scope (an approver lists what it may decide).
   */
  allows(tool: string, granted: ReadonlySet<string>): boolean;
  /** Every scope some call may need (the `scopes_supported` of the resource metadata), sorted. */
  readonly supported: readonly string[];
  /**
   * The scopes a 401 challenge asks for, sorted: every supported one but the approvals scope (an approver asks for
   * it on purpose; an agent's client should not get it by default).
   */
  readonly requested: readonly string[];
  /** The approvals scope. */
  readonly approvals: string;
}

/**
 * The scopes of each tool: `perTool[tool]` when given, else the approvals scope for `decide_approval`, else the
 * read scope for a read-only tool, else the write scope (a tool the server does not know needs the write scope too,
 * so a read-only token learns nothing from it).
 */
export function mcpToolScopes(options: McpToolScopeOptions = {}): McpToolScopes {
  const read = options.read ?? MCP_OAUTH_DEFAULT_SCOPES.read;
  const write = options.write ?? MCP_OAUTH_DEFAULT_SCOPES.write;
  const readOnly = new Set(options.readOnlyTools ?? READ_ONLY_SERVER_TOOLS);
  const approvals = options.approvals ?? MCP_APPROVALS_SCOPE;
  const perTool = new Map(Object.entries(options.perTool ?? {}).map(([tool, scopes]) => [tool, [...scopes]]));
  if (!perTool.has(DECIDE_TOOL)) perTool.set(DECIDE_TOOL, [approvals]);
  const supported = new Set([read, write, approvals, ...[...perTool.values()].flat()]);
  const others = [...perTool].filter(([tool]) => tool !== DECIDE_TOOL).flatMap(([, scopes]) => scopes);
  const requested = new Set([read, write, ...others]);
  const of = (tool: string): readonly string[] => perTool.get(tool) ?? [readOnly.has(tool) ? read : write];
  return {
    of,
    allows: (tool, granted) =>
      of(tool).every((scope) => granted.has(scope)) ||
      (tool === LIST_APPROVALS_TOOL && !perTool.has(tool) && granted.has(approvals)),
    supported: [...supported].sort(),
    requested: [...requested].sort(),
    approvals,
  };
}

/**
 * The tools of `catalog` whose effect is `read-only`, and the server's own read-only tools (`get_agent_run`,
 * `list_pending_approvals`).
 */
export function mcpReadOnlyToolNames(catalog: readonly ToolCatalogEntry[]): string[] {
  return [
    ...catalog.filter((entry) => entry.effect === 'read-only').map((entry) => entry.name),
    ...READ_ONLY_SERVER_TOOLS,
  ];
}

/**
 * The scopes a JSON-RPC body needs: those of every `tools/call` in it (one message or a batch); none for any
 * other method (a valid token for this server is enough for them).
 */
export function scopesNeededBy(body: unknown, scopes: McpToolScopes): string[] {
  return [...new Set(toolsCalledIn(body).flatMap((tool) => scopes.of(tool)))];
}

/**
 * The scopes a token granting `granted` lacks for the `tools/call`s of a JSON-RPC body (one message or a batch):
 * `needed`, the scopes of every call it may not make, and `missing`, those of them it lacks; both empty when it
 * may make them all.
 */
export function scopesLackedFor(
  body: unknown,
  scopes: McpToolScopes,
  granted: ReadonlySet<string>,
): { needed: string[]; missing: string[] } {
  const refused = toolsCalledIn(body).filter((tool) => !scopes.allows(tool, granted));
  const needed = [...new Set(refused.flatMap((tool) => scopes.of(tool)))];
  return { needed, missing: needed.filter((scope) => !granted.has(scope)) };
}

/** The tool names of the `tools/call`s of a JSON-RPC body ('' for a call naming none). */
function toolsCalledIn(body: unknown): string[] {
  const tools: string[] = [];
  for (const message of Array.isArray(body) ? body : [body]) {
    if (!isRecord(message) || message['method'] !== 'tools/call') continue;
    const params = message['params'];
    tools.push(isRecord(params) && typeof params['name'] === 'string' ? params['name'] : '');
  }
  return tools;
}

/** The scopes an access token grants: its `scope` claim (space-separated, RFC 9068), or an `scp` array or string. */
export function scopesGrantedBy(claims: Record<string, unknown>): Set<string> {
  const granted = new Set<string>();
  for (const claim of [claims['scope'], claims['scp']]) {
    const values = typeof claim === 'string' ? claim.split(' ') : Array.isArray(claim) ? claim : [];
    for (const value of values) if (typeof value === 'string' && value !== '') granted.add(value);
  }
  return granted;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
