import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeHttpServer, listenOnFreePort } from './local-server';

/** Limits of the test ledger. */
export const LEDGER_SETTINGS = {
  /** Amounts above this are refused with HTTP 422 and leave no effect (a permanent business-rule failure). */
  maxAmount: 1_000_000,
  /** Largest request body the ledger reads. */
  maxBodyBytes: 64 * 1024,
  /** Request header that marks a lookup as a reconcile (counted in `reconciles`). */
  purposeHeader: 'x-ledger-purpose',
} as const;

/** One side effect the ledger recorded. */
export interface LedgerEffect {
  /** `eff_<n>`, in recording order. */
  effectId: string;
  /** The idempotency key the caller sent. The ledger does not deduplicate by it. */
  key: string;
  kind: string;
  amount: number;
  /** `Date.now()` when it was recorded. */
  atMs: number;
}

/** What the ledger is doing with a write: it arrived, or its effect was just recorded (before the answer). */
export interface LedgerEvent {
  phase: 'received' | 'recorded';
  key: string;
  kind: string;
  /** The sender's `x-chaos-worker-pid` header, when it sent one. */
  workerPid?: number;
}

/** Options of {@link startLedgerServer}. */
export interface LedgerServerOptions {
  /**
   * Milliseconds to wait before recording a write (`before`) and before answering it (`after`). A delay
   * `after` widens the "effect done, result not yet recorded by the caller" crash window.
   */
  delayMs?: (write: { key: string; kind: string; phase: 'before' | 'after' }) => number;
}

/** A running {@link startLedgerServer}. */
export interface LedgerServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Every effect recorded so far, in order. */
  effects: LedgerEffect[];
  /**
   * Lookups marked `x-ledger-purpose: reconcile` (a tool asking what happened under a key after a crash),
   * by whether they found an effect: `found` means the crash came after the effect, `notFound` before it.
   */
  reconciles: { found: number; notFound: number };
  /** Calls `listener` synchronously on every write event; returns a function that removes it. */
  onEvent(listener: (event: LedgerEvent) => void): () => void;
  close(): Promise<void>;
}

/**
 * Starts a test-only HTTP ledger on 127.0.0.1 (a free port) that records side effects by key and does NOT
 * deduplicate: a second effect under one key is kept and visible as a duplicate. The chaos tests count
 * effects here, at the downstream, because Temporal's history keeps only an activity's final attempt.
 *
 * - `POST /effects` `{ key, kind, amount }` → 201 `{ effectId }`; 400 on a malformed body; 422 (no effect)
 *   when `amount` exceeds {@link LEDGER_SETTINGS.maxAmount}.
 * - `GET /effects?key=K&kind=C` → `{ effects }` under that key (and kind); `GET /effects` → all effects.
 *   A lookup with `x-ledger-purpose: reconcile` is counted in `reconciles`.
 *
 * A write whose caller disconnects (a killed worker) is still recorded, like a real server would.
 *
 * @example
 * ```ts
 * const ledger = await startLedgerServer({ delayMs: ({ phase }) => (phase === 'after' ? 200 : 0) });
 * await fetch(`${ledger.url}/effects`, { method: 'POST', body: JSON.stringify({ key: 'k', kind: 'charge', amount: 5 }) });
 * expect(ledger.effects).toHaveLength(1);
 * await ledger.close();
 * ```
 */
export async function startLedgerServer(options: LedgerServerOptions = {}): Promise<LedgerServer> {
  const effects: LedgerEffect[] = [];
  const reconciles = { found: 0, notFound: 0 };
  const listeners = new Set<(event: LedgerEvent) => void>();
  const emit = (event: LedgerEvent): void => listeners.forEach((listener) => listener(event));
  const delay = (write: { key: string; kind: string; phase: 'before' | 'after' }): Promise<void> => {
    const ms = options.delayMs?.(write) ?? 0;
    return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
  };

  const handleWrite = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readJson(req);
    const write = body as Partial<{ key: unknown; kind: unknown; amount: unknown }> | undefined;
    if (
      !write ||
      typeof write.key !== 'string' ||
      typeof write.kind !== 'string' ||
      typeof write.amount !== 'number' ||
      !Number.isFinite(write.amount)
    ) {
      return answer(res, 400, { error: 'Expected a JSON body { key: string, kind: string, amount: number }.' });
    }
    const { key, kind, amount } = write as { key: string; kind: string; amount: number };
    const pid = Number(req.headers['x-chaos-worker-pid']);
    const sender = Number.isInteger(pid) && pid > 0 ? { workerPid: pid } : {};
    emit({ phase: 'received', key, kind, ...sender });
    await delay({ key, kind, phase: 'before' });
    if (amount > LEDGER_SETTINGS.maxAmount) {
      return answer(res, 422, { error: `Amount ${amount} exceeds the limit of ${LEDGER_SETTINGS.maxAmount}.` });
    }
    const effect: LedgerEffect = { effectId: `eff_${effects.length + 1}`, key, kind, amount, atMs: Date.now() };
    effects.push(effect);
    emit({ phase: 'recorded', key, kind, ...sender });
    await delay({ key, kind, phase: 'after' });
    answer(res, 201, { effectId: effect.effectId });
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://ledger');
    if (url.pathname !== '/effects') return answer(res, 404, { error: 'Not found.' });
    if (req.method === 'GET') {
      const key = url.searchParams.get('key');
      const kind = url.searchParams.get('kind');
      const found = effects.filter((e) => (key === null || e.key === key) && (kind === null || e.kind === kind));
      if (req.headers[LEDGER_SETTINGS.purposeHeader] === 'reconcile') {
        if (found.length > 0) reconciles.found += 1;
        else reconciles.notFound += 1;
      }
      return answer(res, 200, { effects: found });
    }
    if (req.method === 'POST') {
      handleWrite(req, res).catch((error: unknown) => answer(res, 500, { error: String(error) }));
      return;
    }
    answer(res, 405, { error: 'Use GET or POST.' });
  });
  const port = await listenOnFreePort(server);
  return {
    url: `http://127.0.0.1:${port}`,
    effects,
    reconciles,
    onEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => {
      listeners.clear();
      return closeHttpServer(server);
    },
  };
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve) => {
    let text = '';
    let tooLong = false;
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      if (text.length + chunk.length > LEDGER_SETTINGS.maxBodyBytes) tooLong = true;
      else text += chunk;
    });
    req.on('end', () => {
      if (tooLong) return resolve(undefined);
      try {
        resolve(JSON.parse(text) as unknown);
      } catch {
        resolve(undefined);
      }
    });
    // A caller killed mid-body never sends the rest: that write never happened.
    req.on('error', () => resolve(undefined));
    req.on('close', () => resolve(undefined));
  });
}

function answer(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed || res.writableEnded) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
