import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running {@link startPeerLedger}. */
export interface PeerLedger {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Effects recorded per key (the ledger deduplicates nothing: a second effect under a key is a duplicate). */
  counts: Map<string, number>;
  /** Effects recorded so far, all keys. */
  total(): number;
  /**
   * Calls `listener` synchronously after each recorded effect, with the sender's process id when it sent one
   * ({@link WORKER_PID_HEADER}); returns a function that removes it.
   */
  onEffect(listener: (key: string, total: number, senderPid?: number) => void): () => void;
  close(): Promise<void>;
}

/**
 * The downstream of `npm run bench:peers`: `POST /effects {"key": K}` records one effect under K and answers
 * 201; `GET /effects?key=K` answers `{ "effects": n }` (a durable-tools `reconcile` asks it after a crash).
 * A write whose caller was killed after sending it is still recorded, as a real server would.
 */
export async function startPeerLedger(): Promise<PeerLedger> {
  const counts = new Map<string, number>();
  const listeners = new Set<(key: string, total: number, senderPid?: number) => void>();
  let total = 0;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://ledger');
    if (url.pathname !== '/effects') return answer(res, 404, { error: 'Not found.' });
    if (req.method === 'GET') return answer(res, 200, { effects: counts.get(url.searchParams.get('key') ?? '') ?? 0 });
    if (req.method !== 'POST') return answer(res, 405, { error: 'Use GET or POST.' });
    void readKey(req).then((key) => {
      if (key === undefined) return answer(res, 400, { error: 'Expected a JSON body { "key": string }.' });
      counts.set(key, (counts.get(key) ?? 0) + 1);
      total += 1;
      const pid = Number(req.headers[WORKER_PID_HEADER]);
      for (const listener of listeners) listener(key, total, Number.isInteger(pid) && pid > 0 ? pid : undefined);
      answer(res, 201, { effect: total });
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    total: () => total,
    onEffect(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () =>
      new Promise<void>((resolve) => {
        listeners.clear();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readKey(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => {
      try {
        const body = JSON.parse(text) as { key?: unknown };
        resolve(typeof body.key === 'string' && body.key.includes('/') ? body.key : undefined);
      } catch {
        resolve(undefined);
      }
    });
    req.on('error', () => resolve(undefined));
  });
}

function answer(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed || res.writableEnded) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Request header naming the process that sent a write (`bench:recovery --standby` kills that one). */
export const WORKER_PID_HEADER = 'x-worker-pid';

/** `POST <ledger>/effects {"key": key}`: one effect; throws on a non-2xx answer. Used by every system's step. */
export async function postEffect(ledgerUrl: string, key: string): Promise<void> {
  const response = await fetch(`${ledgerUrl}/effects`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key, [WORKER_PID_HEADER]: String(process.pid) },
    body: JSON.stringify({ key }),
  });
  if (!response.ok) throw new Error(`The ledger answered ${response.status} for ${key}.`);
  await response.arrayBuffer();
}
