import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

/** The `_meta` key our worker sends each call's idempotency key under. */
const IDEMPOTENCY_KEY_META = 'io.durable-tools/idempotency-key';

/** One `tools/call` request as the server received it (parsed from the HTTP body). */
export interface ReceivedCall {
  tool: string;
  arguments: Record<string, unknown>;
  meta: Record<string, unknown>;
  /** The `MCP-Protocol-Version` header of the request. */
  protocolVersion: string | undefined;
}

/** A running 2026-07-28 MCP server (see {@link startModernMcpServer}). */
export interface ModernMcpServer {
  /** Its MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  /** Every `tools/call` received, in order (re-issued requests included). */
  readonly calls: ReceivedCall[];
  /** Every JSON-RPC method received, in order (`server/discover`, `tools/list`, …). */
  readonly methods: string[];
  /** The effects the downstream performed, by idempotency key: a key with 2 ran twice. */
  readonly effects: Map<string, number>;
  /** Answers of HTTP requests that were cut on purpose (the socket destroyed mid-call). */
  readonly cuts: string[];
  /** Changes the `ttlMs` / `cacheScope` of the next `tools/list` answers. */
  setListHints(hints: { ttlMs: number; cacheScope: 'public' | 'private' }): void;
  stop(): Promise<void>;
}

/**
 * A small MCP server of the 2026-07-28 revision only (`@modelcontextprotocol/server` v2, `createMcpHandler` with
 * `legacy: 'reject'`: no `initialize`, no session, `server/discover`), in this process on 127.0.0.1, with a
 * counting downstream. Its tools:
 * - `book` `{ item, cut? }`: performs one effect at the downstream per idempotency key, like a durable server: a
 *   request re-issued with the same key (`_meta["io.durable-tools/idempotency-key"]`) joins the first one's work
 *   (which takes 300 ms) and answers its result. With `cut: true`, the HTTP connection of the first request for a
 *   key is destroyed mid-call: after the first SSE event (a progress notification, sent when the request has a
 *   progress token), or before a JSON answer is written; the work goes on;
 * - `lookup` `{ q }` (read-only): echoes.
 * `tools/list` answers carry the hints set by {@link ModernMcpServer.setListHints} (default 60 s, private).
 */
export async function startModernMcpServer(): Promise<ModernMcpServer> {
  const calls: ReceivedCall[] = [];
  const methods: string[] = [];
  const effects = new Map<string, number>();
  const cuts: string[] = [];
  const work = new Map<string, Promise<string>>();
  /** Keys whose first HTTP response was chosen to be cut. */
  const cutKeys = new Set<string>();
  let hints: { ttlMs: number; cacheScope: 'public' | 'private' } = { ttlMs: 60_000, cacheScope: 'private' };

  const book = (key: string, item: string): Promise<string> => {
    let running = work.get(key);
    if (!running) {
      running = (async () => {
        effects.set(key, (effects.get(key) ?? 0) + 1);
        // The work takes a while: long enough for a cut answer to be re-issued before it ends.
        await new Promise((resolve) => setTimeout(resolve, 300));
        return `booked ${item} #${effects.size}`;
      })();
      work.set(key, running);
    }
    return running;
  };

  const factory = () => {
    const server = new McpServer(
      { name: 'modern-test-server', version: '1.0.0' },
      { capabilities: { tools: {} }, cacheHints: { 'tools/list': hints } },
    );
    server.registerTool(
      'book',
      {
        description: 'Books an item (one effect per idempotency key).',
        inputSchema: z.object({ item: z.string(), cut: z.boolean().optional() }),
        annotations: { idempotentHint: true, destructiveHint: false },
      },
      async ({ item }, ctx) => {
        const meta = (ctx.mcpReq as { _meta?: Record<string, unknown> })._meta ?? {};
        const key = typeof meta[IDEMPOTENCY_KEY_META] === 'string' ? (meta[IDEMPOTENCY_KEY_META] as string) : '';
        if (meta.progressToken !== undefined) {
          // A notification before the result turns the answer into an SSE stream: a later cut is mid-stream.
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken: meta.progressToken as string | number, progress: 0, message: 'booking' },
          });
        }
        const text = key ? await book(key, item) : `booked ${item} without a key`;
        return { content: [{ type: 'text' as const, text }] };
      },
    );
    server.registerTool(
      'lookup',
      {
        description: 'Looks up a word.',
        inputSchema: z.object({ q: z.string() }),
        annotations: { readOnlyHint: true },
      },
      async ({ q }) => ({ content: [{ type: 'text' as const, text: `found ${q}` }] }),
    );
    return server;
  };
  const handler = createMcpHandler(factory, { legacy: 'reject' });

  const http = createServer((req, res) => {
    void serve(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
      else res.destroy();
    });
  });
  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let cutKey: string | undefined;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const message = body.length ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : undefined;
    if (message && typeof message.method === 'string') {
      methods.push(message.method);
      const params = (message.params ?? {}) as Record<string, unknown>;
      if (message.method === 'tools/call') {
        const args = (params.arguments ?? {}) as Record<string, unknown>;
        const meta = (params._meta ?? {}) as Record<string, unknown>;
        const header = req.headers['mcp-protocol-version'];
        calls.push({
          tool: String(params.name),
          arguments: args,
          meta,
          protocolVersion: typeof header === 'string' ? header : undefined,
        });
        const key = meta[IDEMPOTENCY_KEY_META];
        if (args.cut === true && typeof key === 'string' && !cutKeys.has(key)) {
          cutKeys.add(key);
          cutKey = key;
        }
      }
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') headers.set(name, value);
    }
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method ?? 'GET',
      headers,
      ...(body.length && req.method !== 'GET' ? { body } : {}),
    });
    const response = await handler.fetch(request);
    const cut = () => {
      cuts.push(cutKey ?? '');
      res.destroy();
    };
    // A JSON answer is cut before it is written; an SSE answer after its first event (mid-stream).
    const streamed = response.headers.get('content-type')?.startsWith('text/event-stream') === true;
    if (cutKey !== undefined && !streamed) return cut();
    res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
    if (!response.body) return void res.end();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      if (res.destroyed) return;
      await new Promise<void>((resolve) => res.write(chunk, () => resolve()));
      if (cutKey !== undefined) return cut(); // once the event left: the client has read the stream's start
    }
    res.end();
  };
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  return {
    url,
    calls,
    methods,
    effects,
    cuts,
    setListHints: (next) => {
      hints = next;
    },
    stop: async () => {
      await handler.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
