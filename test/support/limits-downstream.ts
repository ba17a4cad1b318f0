import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import { closeHttpServer, listenOnFreePort } from './local-server';

/** One request the downstream received: its key, when it arrived and when it was answered (server clock, ms). */
export interface LimitedRequest {
  key: string;
  /** The worker that sent it (`x-worker` header), when it said. */
  worker?: string;
  atMs: number;
  answeredAtMs?: number;
  status?: number;
}

/** A 429 the downstream was told to answer: to the next request of `key`, with `Retry-After: seconds`. */
export interface RetryAfterOrder {
  key: string;
  seconds: number;
  /** When it was answered (server clock), once it was. */
  answeredAtMs?: number;
}

/** A running {@link startLimitsDownstream}. */
export interface LimitsDownstream {
  url: string;
  requests: LimitedRequest[];
  /** Most requests of one key in progress at once, over all keys. */
  maxInFlight(): number;
  /** Arrivals at which more than `max` requests of their key were in progress. */
  concurrencyViolations(max: number): number;
  /** Windows of `periodMs` (starting at an arrival) that held more than `limit` arrivals of one key. */
  rateViolations(limit: number, periodMs: number): number;
  /** Answers the next request of `key` with 429 and `Retry-After: seconds`. */
  answer429(key: string, seconds: number): RetryAfterOrder;
  /** Requests of `key` that arrived within the order's Retry-After, after its 429 was answered. */
  requestsDuring(order: RetryAfterOrder): LimitedRequest[];
  close(): Promise<void>;
}

/**
 * A downstream for per-tool limits: `POST /call?key=K` holds each request `holdMs` then answers 200 `{ ok: true }`,
 * counting how many requests of each key are in progress and when each arrived (its own monotonic clock), so a test
 * or the bench can tell whether the limits held where it matters: at the downstream.
 */
export async function startLimitsDownstream(
  holdMs: number,
  { holdFirstMs }: { holdFirstMs?: number } = {},
): Promise<LimitsDownstream> {
  const timers = new Set<NodeJS.Timeout>();
  const requests: LimitedRequest[] = [];
  const inFlight = new Map<string, number>();
  const overLimitAt: Array<{ key: string; count: number }> = [];
  const orders: RetryAfterOrder[] = [];
  let maxSeen = 0;
  const server = createServer((req, res) => {
    const key = new URL(req.url ?? '/', 'http://x').searchParams.get('key') ?? '';
    const worker = req.headers['x-worker'];
    const request: LimitedRequest = { key, atMs: performance.now(), ...(typeof worker === 'string' ? { worker } : {}) };
    requests.push(request);
    const count = (inFlight.get(key) ?? 0) + 1;
    inFlight.set(key, count);
    overLimitAt.push({ key, count });
    maxSeen = Math.max(maxSeen, count);
    const order = orders.find((o) => o.key === key && o.answeredAtMs === undefined);
    const answer = (status: number, headers: Record<string, string>, body: string) => {
      inFlight.set(key, (inFlight.get(key) ?? 1) - 1);
      request.answeredAtMs = performance.now();
      request.status = status;
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body);
    };
    req.resume();
    if (order) {
      order.answeredAtMs = performance.now();
      answer(429, { 'retry-after': String(order.seconds) }, '{"error":"slow down"}');
      return;
    }
    const hold = requests.length === 1 && holdFirstMs !== undefined ? holdFirstMs : holdMs;
    const timer = setTimeout(() => {
      timers.delete(timer);
      answer(200, {}, '{"ok":true}');
    }, hold);
    timers.add(timer);
  });
  const port = await listenOnFreePort(server);
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    maxInFlight: () => maxSeen,
    concurrencyViolations: (max) => overLimitAt.filter((a) => a.count > max).length,
    rateViolations: (limit, periodMs) => rateViolations(requests, limit, periodMs),
    answer429(key, seconds) {
      const order = { key, seconds };
      orders.push(order);
      return order;
    },
    requestsDuring: (order) =>
      order.answeredAtMs === undefined
        ? []
        : requests.filter(
            (r) =>
              r.key === order.key &&
              r.atMs > order.answeredAtMs! &&
              r.atMs < order.answeredAtMs! + order.seconds * 1000,
          ),
    close: () => {
      for (const timer of timers) clearTimeout(timer);
      return closeHttpServer(server);
    },
  };
}

function rateViolations(requests: readonly LimitedRequest[], limit: number, periodMs: number): number {
  const byKey = new Map<string, number[]>();
  for (const r of requests) byKey.set(r.key, [...(byKey.get(r.key) ?? []), r.atMs]);
  let violations = 0;
  for (const times of byKey.values()) {
    times.sort((a, b) => a - b);
    for (let i = 0; i + limit < times.length; i += 1) if (times[i + limit]! - times[i]! < periodMs) violations += 1;
  }
  return violations;
}
