import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/** Defaults of the session limits of `startMcpHttpListener`. */
export const MCP_HTTP_SESSION_DEFAULTS = {
  /** Live sessions at most; one more `initialize` is refused with 503 until one closes or expires. */
  maxSessions: 256,
  /**
   * Live sessions of one caller at most (an authenticated one: without authentication every client is the one shared
   * caller, bounded by `maxSessions` only), so one caller cannot hold every session of the listener.
   */
  maxSessionsPerCaller: 32,
  /** A session without a request in flight for this long is closed and forgotten (30 minutes). */
  idleTimeoutMs: 30 * 60_000,
} as const;

interface Session {
  transport: StreamableHTTPServerTransport;
  /** The caller scope that opened it: only that caller may use it. */
  owner: string;
  lastActive: number;
  /** Requests (and open SSE streams) of the session not yet answered: a busy session never idles out. */
  inFlight: number;
}

/**
 * The live Streamable HTTP sessions of a listener, each bound to the caller that opened it, with a cap and an idle
 * timeout measured on an injectable clock. Closing a session drops every reference the listener holds to it (its
 * transport and MCP server), so memory of expired sessions is freed.
 */
export class McpHttpSessions {
  readonly #sessions = new Map<string, Session>();
  readonly #max: number;
  readonly #maxPerOwner: number;
  readonly #idleMs: number;
  readonly #now: () => number;
  /** Sessions being opened (counted against the caps before their id exists), by owner. */
  readonly #opening = new Map<string, number>();

  constructor(options: { maxSessions: number; maxSessionsPerOwner: number; idleTimeoutMs: number; now: () => number }) {
    this.#max = options.maxSessions;
    this.#maxPerOwner = options.maxSessionsPerOwner;
    this.#idleMs = options.idleTimeoutMs;
    this.#now = options.now;
  }

  /** Live sessions (those opening included). */
  get size(): number {
    let opening = 0;
    for (const count of this.#opening.values()) opening += count;
    return this.#sessions.size + opening;
  }

  /** Live sessions of `owner` (those opening included). */
  sizeOf(owner: string): number {
    let live = this.#opening.get(owner) ?? 0;
    for (const session of this.#sessions.values()) if (session.owner === owner) live += 1;
    return live;
  }

  /**
   * Reserves a place for a new session of `owner`; undefined when the listener's cap or the owner's is reached.
   * Release with the returned function.
   */
  reserve(owner: string): (() => void) | undefined {
    if (this.size >= this.#max || this.sizeOf(owner) >= this.#maxPerOwner) return undefined;
    this.#opening.set(owner, (this.#opening.get(owner) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#opening.get(owner) ?? 1) - 1;
      if (left > 0) this.#opening.set(owner, left);
      else this.#opening.delete(owner);
    };
  }

  /** Records a session that completed `initialize`. */
  add(id: string, transport: StreamableHTTPServerTransport, owner: string): void {
    this.#sessions.set(id, { transport, owner, lastActive: this.#now(), inFlight: 0 });
  }

  /** Forgets a session (its transport closed). */
  delete(id: string): void {
    this.#sessions.delete(id);
  }

  /**
   * The session `id` of `owner`, marked busy until the returned `done` is called; undefined for an unknown id and
   * for another caller's session (answered alike, so a session id tells a stranger nothing).
   */
  use(id: string, owner: string): { transport: StreamableHTTPServerTransport; done: () => void } | undefined {
    const session = this.#sessions.get(id);
    if (!session || session.owner !== owner) return undefined;
    session.inFlight += 1;
    session.lastActive = this.#now();
    let finished = false;
    return {
      transport: session.transport,
      done: () => {
        if (finished) return;
        finished = true;
        session.inFlight -= 1;
        session.lastActive = this.#now();
      },
    };
  }

  /** Closes every session idle for the timeout or longer; resolves with how many it closed. */
  async closeIdle(): Promise<number> {
    const now = this.#now();
    const idle = [...this.#sessions].filter(([, s]) => s.inFlight === 0 && now - s.lastActive >= this.#idleMs);
    for (const [id] of idle) this.#sessions.delete(id);
    await Promise.all(idle.map(([, s]) => s.transport.close().catch(() => {})));
    return idle.length;
  }

  /** Closes every session. */
  async closeAll(): Promise<void> {
    const all = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.all(all.map((s) => s.transport.close().catch(() => {})));
  }
}
