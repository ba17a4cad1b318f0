import type { Tool as McpToolListing } from '@modelcontextprotocol/client';
import type { Tool } from '../../tools/define-tool';
import type { ToolCatalogEntry } from '../../contract/tool-catalog-entry';
import type { ToolRegistry } from '../../tools/tool-registry';
import { McpClientPool, type McpOAuthRuntime } from './mcp-client-pool';
import { DEFAULT_MCP_LIST_TTL_MS, parseMcpConfig, type McpServersConfig, type McpTaskSettings } from './mcp-config';
import { mcpToolName } from './mcp-tool-name';
import { toolFromMcp } from './mcp-tool-mapping';

/** What the host knows about one server's tools. */
interface ServerListing {
  tools: Tool[];
  listedAt: number;
  /** How long this list is fresh: the server's `ttlMs` (2026-07-28), else the configured `listTtlMs`. */
  ttlMs: number;
  /** The list's `cacheScope` (`private` when the server gave none). */
  cacheScope: 'public' | 'private';
  /** Why the last listing failed, if it did (the previous tools are kept). */
  error?: string;
}

/** Options of {@link createMcpHost}. */
export interface McpHostOptions {
  /** Clock for the list TTL (tests inject one). */
  now?: () => number;
  /** Where warnings go (default `console.warn`). */
  warn?: (message: string) => void;
  /** Clock, fetch and environment of the OAuth clients of protected servers (tests inject them). */
  oauth?: McpOAuthRuntime;
}

/**
 * The MCP side of a worker: a pool of client connections and the tools each server lists, as engine tools.
 * Lists are kept for the configured TTL (default 5 minutes) and listed again sooner after a server sends
 * `notifications/tools/list_changed`. A server that cannot be listed keeps its last known tools (none at first)
 * and a warning is printed; it never stops the other servers or the run.
 */
export class McpHost {
  readonly pool: McpClientPool;
  readonly #config: McpServersConfig;
  readonly #listings = new Map<string, ServerListing>();
  readonly #refreshing = new Map<string, Promise<void>>();
  /** Servers that announced `list_changed` since their last listing started. */
  readonly #changed = new Set<string>();
  readonly #now: () => number;
  readonly #warn: (message: string) => void;

  constructor(config: McpServersConfig, options: McpHostOptions = {}) {
    this.#config = config;
    this.#now = options.now ?? Date.now;
    const warn = options.warn ?? ((message: string) => console.warn(`durable-tools: ${message}`));
    const warned = new Set<string>();
    this.#warn = (message) => {
      if (warned.has(message)) return; // once per process, not at every listing
      warned.add(message);
      warn(message);
    };
    this.pool = new McpClientPool(config.mcpServers, {
      onToolsChanged: (server) => {
        this.#changed.add(server);
      },
      ...(options.oauth ? { oauth: options.oauth } : {}),
    });
  }

  /**
   * Lists again every server whose list is stale or was announced as changed. A list is fresh for the `ttlMs` its
   * server sent with it (MCP 2026-07-28; 0 means stale at once, so such a server is listed at every refresh; at
   * most 24 h), else for the configured `listTtlMs` (default 5 minutes: 2025-11-25 servers send no hint).
   */
  async refresh(options: { force?: boolean } = {}): Promise<void> {
    await Promise.all(
      this.pool.serverNames().map((server) => {
        const listing = this.#listings.get(server);
        const due =
          options.force ||
          !listing ||
          listing.error !== undefined ||
          this.#changed.has(server) ||
          this.#now() - listing.listedAt >= listing.ttlMs;
        return due ? this.#refreshServer(server) : undefined;
      }),
    );
  }

  /** The MCP tools known now, server by server in configuration order. */
  tools(): Tool[] {
    return this.pool.serverNames().flatMap((server) => this.#listings.get(server)?.tools ?? []);
  }

  /**
   * The cache hints of each server's last list: how long it is believed (`ttlMs`, the server's or the configured
   * one) and its `cacheScope`. A list is held per configured server entry, i.e. for the one set of credentials it
   * was listed with, so a `private` list never reaches another authorization context.
   */
  listingHints(): Record<string, { ttlMs: number; cacheScope: 'public' | 'private' }> {
    const hints: Record<string, { ttlMs: number; cacheScope: 'public' | 'private' }> = {};
    for (const [server, listing] of this.#listings)
      hints[server] = { ttlMs: listing.ttlMs, cacheScope: listing.cacheScope };
    return hints;
  }

  /** Why listing a server failed the last time, by server (empty when all listed). */
  listingErrors(): Record<string, string> {
    const errors: Record<string, string> = {};
    for (const [server, listing] of this.#listings) if (listing.error) errors[server] = listing.error;
    return errors;
  }

  /** Closes every connection (stops stdio servers). */
  async close(): Promise<void> {
    await this.pool.close();
  }

  #refreshServer(server: string): Promise<void> {
    const running = this.#refreshing.get(server);
    if (running) return running;
    const pending = this.#list(server).finally(() => this.#refreshing.delete(server));
    this.#refreshing.set(server, pending);
    return pending;
  }

  async #list(server: string): Promise<void> {
    const previous = this.#listings.get(server);
    const startedAt = this.#now();
    this.#changed.delete(server);
    try {
      const listed = await this.pool.listTools(server);
      const tasks = await this.pool.supportsToolTasks(server);
      this.#listings.set(server, {
        tools: this.#toTools(server, listed.tools, tasks),
        listedAt: startedAt,
        ttlMs: listed.hints.ttlMs ?? this.#defaultTtl(),
        cacheScope: listed.hints.cacheScope,
      });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.#warn(`could not list the tools of MCP server "${server}": ${reason}`);
      this.#listings.set(server, {
        tools: previous?.tools ?? [],
        listedAt: previous?.listedAt ?? 0,
        ttlMs: previous?.ttlMs ?? this.#defaultTtl(),
        cacheScope: previous?.cacheScope ?? 'private',
        error: reason,
      });
    }
  }

  #defaultTtl(): number {
    return this.#config.listTtlMs ?? DEFAULT_MCP_LIST_TTL_MS;
  }

  #toTools(server: string, listed: McpToolListing[], serverRunsTasks: boolean): Tool[] {
    const config = this.pool.config(server);
    const wanted = config.tools ? new Set(config.tools) : undefined;
    const names = new Set<string>();
    const tools: Tool[] = [];
    for (const listing of listed) {
      if (wanted && !wanted.has(listing.name)) continue;
      const asTask = runsAsTask(listing, config.tasks?.use ?? 'when-required', serverRunsTasks);
      if (asTask === 'impossible') {
        this.#warn(
          `MCP tool "${listing.name}" of "${server}" can only run as an MCP task, but the server does not declare tasks for tools/call; it is not offered.`,
        );
        continue;
      }
      let name = mcpToolName(server, listing.name);
      for (let salt = 1; names.has(name); salt += 1) name = mcpToolName(server, listing.name, String(salt));
      names.add(name);
      try {
        tools.push(
          toolFromMcp({
            server,
            trust: config.trust,
            name,
            listing,
            pool: this.pool,
            ...(config.timeoutMs !== undefined ? { timeoutMs: config.timeoutMs } : {}),
            ...(asTask ? { task: taskSettings(config.tasks) } : {}),
          }),
        );
      } catch (error) {
        this.#warn(`MCP tool "${listing.name}" of "${server}" is not offered: ${(error as Error).message}`);
      }
    }
    return tools;
  }
}

/**
 * Whether a listed tool runs as an MCP task: a `required` one always (`'impossible'` when the server does not
 * declare `tasks.requests.tools.call`, so it cannot be called at all), an `optional` one when the server's
 * configuration says `tasks.use: 'when-supported'` and the server declares tasks; never a `forbidden` one.
 */
export function runsAsTask(
  listing: McpToolListing,
  use: McpTaskSettings['use'],
  serverRunsTasks: boolean,
): boolean | 'impossible' {
  const support = listing.execution?.taskSupport;
  if (support === 'required') return serverRunsTasks ? true : 'impossible';
  return support === 'optional' && use === 'when-supported' && serverRunsTasks;
}

function taskSettings(tasks: McpTaskSettings | undefined): { deadlineMs?: number; heartbeatTimeoutMs?: number } {
  return {
    ...(tasks?.deadlineMs !== undefined ? { deadlineMs: tasks.deadlineMs } : {}),
    ...(tasks?.heartbeatTimeoutMs !== undefined ? { heartbeatTimeoutMs: tasks.heartbeatTimeoutMs } : {}),
  };
}

/**
 * Creates an {@link McpHost} from a configuration document (validated with `parseMcpConfig`).
 *
 * @example
 * ```ts
 * const host = createMcpHost({ mcpServers: { everything: { command: 'npx', args: ['mcp-server-everything'] } } });
 * const { worker } = await createWorker({ tools: myTools, mcp: host });
 * ```
 */
export function createMcpHost(config: unknown, options: McpHostOptions = {}): McpHost {
  return new McpHost(parseMcpConfig(config), options);
}

/**
 * A registry holding the worker's own tools and the MCP tools a host knows now. `refresh()` lists the MCP servers
 * again when due; `describeTools` calls it, so the catalog a run records in history is the current one. A worker
 * tool wins over an MCP tool of the same name (which is then not offered).
 */
export function withMcpTools(registry: ToolRegistry, host: McpHost): ToolRegistry {
  const mcpTools = (): Map<string, Tool> => {
    const byName = new Map<string, Tool>();
    for (const tool of host.tools()) if (!registry.has(tool.contract.name)) byName.set(tool.contract.name, tool);
    return byName;
  };
  return Object.freeze({
    get: (name: string) => registry.get(name) ?? mcpTools().get(name),
    has: (name: string) => registry.has(name) || mcpTools().has(name),
    list: () => [...registry.list(), ...mcpTools().values()],
    catalog: (names?: readonly string[]): ToolCatalogEntry[] => {
      const mcp = mcpTools();
      if (!names) return [...registry.catalog(), ...[...mcp.values()].map((tool) => tool.contract.catalogEntry)];
      return names
        .map((name) => registry.get(name)?.contract.catalogEntry ?? mcp.get(name)?.contract.catalogEntry)
        .filter((entry): entry is ToolCatalogEntry => entry !== undefined);
    },
    refresh: async () => {
      await registry.refresh?.();
      await host.refresh();
    },
  });
}
