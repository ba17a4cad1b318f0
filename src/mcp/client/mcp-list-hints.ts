/** The longest a server's `ttlMs` is believed (24 h, the SDK's `MAX_CACHE_TTL_MS`): a server cannot pin a list forever. */
export const MCP_MAX_LIST_TTL_MS = 86_400_000;

/**
 * The cache hints of a list result (MCP 2026-07-28, SEP-2549 `CacheableResult`): how long it stays fresh and
 * whether it may be shared across authorization contexts. A 2025-11-25 server sends neither (`ttlMs` undefined).
 */
export interface McpListHints {
  /** How long the list is fresh, in ms (0: stale at once), capped at {@link MCP_MAX_LIST_TTL_MS}; none from older servers. */
  ttlMs?: number;
  /** `private` (the default when absent): only for the credentials it was listed with; `public`: for anyone. */
  cacheScope: 'public' | 'private';
}

/** The hints carried by a list result, read off its body (the SDK's result types do not name them). */
export function mcpListHints(result: object): McpListHints {
  const { ttlMs, cacheScope } = result as { ttlMs?: unknown; cacheScope?: unknown };
  const ttl =
    typeof ttlMs === 'number' && Number.isFinite(ttlMs) ? Math.min(Math.max(0, ttlMs), MCP_MAX_LIST_TTL_MS) : undefined;
  return { ...(ttl !== undefined ? { ttlMs: ttl } : {}), cacheScope: cacheScope === 'public' ? 'public' : 'private' };
}
