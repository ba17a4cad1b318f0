import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One JSON-RPC message a client POSTed through the proxy. */
export interface ProxiedMessage {
  method?: string;
  params?: Record<string, unknown>;
  /** The `mcp-session-id` header the request carried. */
  sessionId?: string;
  /** True when the proxy kept the request and never forwarded it (see `hold`). */
  held: boolean;
}

/** A running {@link startMcpRecordingProxy}. */
export interface McpRecordingProxy {
  /** The proxy's MCP endpoint (`http://127.0.0.1:<port>/mcp`). */
  url: string;
  /** Every JSON-RPC message POSTed so far, in arrival order. */
  messages: ProxiedMessage[];
  /** The messages of a JSON-RPC method. */
  calls(method: string): ProxiedMessage[];
  /** Requests matching `predicate` from now on are recorded but not forwarded (until `release`) nor answered. */
  hold(predicate: (message: ProxiedMessage) => boolean): void;
  /** Stops holding and forwards the held requests whose clients are still connected. */
  release(): void;
  close(): Promise<void>;
}

/**
 * An HTTP proxy in front of a Streamable HTTP MCP server that records every JSON-RPC message a client sends (the
 * server's own view of what it was asked: how many tasks were created, which task each poll named, from which
 * session) and streams the answers back unchanged (JSON or SSE).
 */
export async function startMcpRecordingProxy(target: string): Promise<McpRecordingProxy> {
  const upstream = new URL(target);
  const messages: ProxiedMessage[] = [];
  let holding: ((message: ProxiedMessage) => boolean) | undefined;
  const held: (() => void)[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const received = req.method === 'POST' ? parseMessages(body, req) : [];
      const hold = holding !== undefined && received.some((message) => holding?.({ ...message, held: true }));
      for (const message of received) messages.push({ ...message, held: hold });
      if (hold) held.push(() => forward(upstream, req, body, res));
      else forward(upstream, req, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    messages,
    calls: (method) => messages.filter((message) => message.method === method),
    hold: (predicate) => {
      holding = predicate;
    },
    release: () => {
      holding = undefined;
      for (const send of held.splice(0)) send();
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function parseMessages(body: Buffer, req: IncomingMessage): Omit<ProxiedMessage, 'held'>[] {
  const sessionId = req.headers['mcp-session-id'];
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    return (Array.isArray(parsed) ? parsed : [parsed]).map((message: { method?: string; params?: object }) => ({
      ...(typeof message.method === 'string' ? { method: message.method } : {}),
      ...(message.params ? { params: message.params as Record<string, unknown> } : {}),
      ...(typeof sessionId === 'string' ? { sessionId } : {}),
    }));
  } catch {
    return [];
  }
}

function forward(upstream: URL, req: IncomingMessage, body: Buffer, res: ServerResponse): void {
  if (res.destroyed) return; // its client is gone (a killed worker)
  const outgoing = httpRequest(
    {
      host: upstream.hostname,
      port: upstream.port,
      path: req.url,
      method: req.method,
      headers: { ...req.headers, host: upstream.host },
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  outgoing.on('error', () => res.destroy());
  res.on('close', () => outgoing.destroy());
  outgoing.end(body);
}
