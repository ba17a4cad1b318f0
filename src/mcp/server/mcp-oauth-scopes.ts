import type { ToolCatalogEntry } from '../../contract/tool-catalog-entry';

/** The scopes an OAuth-protected MCP server requires by default: `tools:read` and `tools:write`. */
export const MCP_OAUTH_DEFAULT_SCOPES = { read: 'tools:read', write: 'tools:write' } as const;

/** The tools of the server itself that only read (`start_agent_run` starts a run, so it writes). */
const READ_ONLY_SERVER_TOOLS = ['get_agent_run'];

/** Which scopes each `tools/call` needs. */
export interface McpToolScopeOptions {
  /** The scope of a read-only tool (default `tools:read`). */
  read?: string;
  /** The scope of any other tool, and of a tool the server does not know (default `tools:write`). */
  write?: string;
  /** The tools that only read (see {@link mcpReadOnlyToolNames}); every other tool needs the write scope. */
  readOnlyTools?: Iterable<string>;
  /** Tools that need other scopes than the default: tool name → every scope it needs. */
  perTool?: Readonly<Record<string, readonly string[]>>;
}

/** The scopes each tool needs, and every scope the server may ask for. */
export interface McpToolScopes {
  /** Every scope a call of `tool` needs. */
  of(tool: string): readonly string[];
  /** Every scope some call may need (the `scopes_supported` of the resource metadata), sorted. */
  readonly supported: readonly string[];
}

/**
 * The scopes of each tool: `perTool[tool]` when given, else the read scope for a read-only tool, else the write
 * scope (a tool the server does not know needs the write scope too, so a read-only token learns nothing from it).
 */
export function mcpToolScopes(options: McpToolScopeOptions = {}): McpToolScopes {
  const read = options.read ?? MCP_OAUTH_DEFAULT_SCOPES.read;
  const write = options.write ?? MCP_OAUTH_DEFAULT_SCOPES.write;
  const readOnly = new Set(options.readOnlyTools ?? READ_ONLY_SERVER_TOOLS);
  const perTool = new Map(Object.entries(options.perTool ?? {}).map(([tool, scopes]) => [tool, [...scopes]]));
  const supported = new Set([read, write, ...[...perTool.values()].flat()]);
  return {
    of: (tool) => perTool.get(tool) ?? [readOnly.has(tool) ? read : write],
    supported: [...supported].sort(),
  };
}

/** The tools of `catalog` whose effect is `read-only`, and the server's own read-only tools (`get_agent_run`). */
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
  const needed = new Set<string>();
  for (const message of Array.isArray(body) ? body : [body]) {
    if (!isRecord(message) || message['method'] !== 'tools/call') continue;
    const params = message['params'];
    const tool = isRecord(params) && typeof params['name'] === 'string' ? params['name'] : '';
    for (const scope of scopes.of(tool)) needed.add(scope);
  }
  return [...needed];
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
