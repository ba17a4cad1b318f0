/**
 * `npx tsx bench/lease-guard-cost.ts`: what the request lease guard (docs/exactly-once.md) costs.
 *
 * - Per request, end to end: POSTs to a local server (keep-alive) with `fetch` through the unguarded
 *   dispatcher (what `fetch` does without the guard), through the guarded one outside a tool attempt and
 *   inside an attempt whose lease is alive (the check runs and passes); `node:http` outside and inside.
 * - The hook's own work, without I/O: the check outside and inside an attempt; what the wrapper adds to each
 *   attempt (an `AttemptRequestGuard` and an `AsyncLocalStorage.run`) around a synchronous no-op.
 * - Per tool call: an async "tool body" (a few awaits) run bare and through `AttemptRequestGuard.run`, the
 *   way the wrapper runs every tool attempt.
 *
 * Interleaved finely (one request or call of each configuration in turn, the order rotating), in blocks:
 * each ratio is the median of per-block ratios, so load changes on a shared machine cancel out; the
 * printed range is the interquartile range over blocks. Two A/A controls (a configuration measured twice)
 * show how far apart two identical configurations come out: differences within that are noise. Printed,
 * never asserted.
 */
import { createServer, request as httpRequest, Agent } from 'node:http';
import { runInThisContext } from 'node:vm';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { AttemptRequestGuard, installRequestLeaseGuard } from '../src/activities/request-lease-guard';
import { assertRequestLease } from '../src/activities/request-lease-scope';
import { ToolCallLease } from '../src/activities/tool-call-lease';
import { MemoryIdempotencyStore } from '../src/stores/idempotency/memory-idempotency-store';
import { LoadSampler, machineLine, median, rotate } from './bench-report';

const BENCH = {
  blocks: Number(process.env.BENCH_BLOCKS ?? 20),
  requestsPerBlock: 50,
  callsPerBlock: 2_000,
  /** Tool calls per measured step (a single call is below the CPU clock's resolution). */
  callsPerStep: 100,
  checksPerBlock: 200_000,
  awaitsPerCall: 5,
} as const;

/** A lease that owns a key and will not lose it while the benchmark runs (ten minutes, never renewed). */
function liveLease(): ToolCallLease {
  const lease = new ToolCallLease({ key: 'bench/1', leaseMs: 600_000, heartbeat: () => {}, log: console });
  lease.owned(new MemoryIdempotencyStore(), 'token', performance.now(), '1');
  return lease;
}

/** Per-configuration totals of one block, in µs. */
type Block = Map<string, number>;

/**
 * Runs `steps` in turn, rotating their order every iteration, and adds each one's CPU time (user + system of
 * this process, which holds the server too) to `block`: on a loaded machine wall time mostly measures how long
 * the scheduler kept this process off a core.
 */
async function interleave(block: Block, iterations: number, steps: Array<[string, () => unknown]>): Promise<void> {
  for (let i = 0; i < iterations; i++) {
    for (const [name, step] of rotate(steps, i)) {
      const start = process.cpuUsage();
      await step();
      // What a request leaves behind (socket and stream clean-up) runs within the next turns of the event
      // loop: let it, so it is counted here and not in whichever step comes next.
      for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
      const used = process.cpuUsage(start);
      block.set(name, (block.get(name) ?? 0) + used.user + used.system);
    }
  }
}

async function main(): Promise<void> {
  installRequestLeaseGuard();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/effects`;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const lease = liveLease();
  const attempt = new AttemptRequestGuard(lease);
  const load = new LoadSampler();
  const realm = runInThisContext('globalThis') as Record<symbol, Record<symbol, unknown>>;
  const guarded = realm[Symbol.for('undici.globalDispatcher.1')]!;
  const unguarded = guarded[Symbol.for('durable-tools.leaseGuard.wrapped')];

  const viaFetch = (dispatcher: unknown) => async (): Promise<void> => {
    await (await fetch(url, { method: 'POST', body: '{}', dispatcher } as RequestInit)).text();
  };
  const viaHttp = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const req = httpRequest(url, { method: 'POST', agent }, (res) => res.resume().on('end', resolve));
      req.on('error', reject);
      req.end('{}');
    });
  const inAttempt = (step: () => Promise<void>) => () => attempt.run(step);
  const body = async (): Promise<number> => {
    let n = 0;
    for (let i = 0; i < BENCH.awaitsPerCall; i++) n += await Promise.resolve(i);
    return n;
  };
  const bareCalls = async (): Promise<void> => {
    for (let i = 0; i < BENCH.callsPerStep; i++) await body();
  };
  const guardedCalls = async (): Promise<void> => {
    for (let i = 0; i < BENCH.callsPerStep; i++) {
      const guard = new AttemptRequestGuard(lease);
      await guard.run(body);
      guard.end();
    }
  };
  const checks = (): void => {
    for (let i = 0; i < BENCH.checksPerBlock; i++) assertRequestLease();
  };
  const noop = (): number => 0;
  const bareSync = (): void => {
    for (let i = 0; i < BENCH.checksPerBlock; i++) noop();
  };
  const guardedSync = (): void => {
    for (let i = 0; i < BENCH.checksPerBlock; i++) {
      const guard = new AttemptRequestGuard(lease);
      guard.run(noop);
      guard.end();
    }
  };

  const blocks: Block[] = [];
  for (let b = -1; b < BENCH.blocks; b++) {
    load.sample();
    const block: Block = new Map();
    await interleave(block, BENCH.requestsPerBlock, [
      ['fetch, no guard', viaFetch(unguarded)],
      ['fetch, guard, outside an attempt', viaFetch(guarded)],
      ['fetch, guard, inside an attempt', inAttempt(viaFetch(guarded))],
      ['node:http, guard, outside an attempt', viaHttp],
      ['node:http, guard, inside an attempt', inAttempt(viaHttp)],
      ['node:http, outside (A/A control)', viaHttp],
    ]);
    await interleave(block, BENCH.callsPerBlock / BENCH.callsPerStep, [
      ['tool body, bare', bareCalls],
      ['tool body, in an attempt guard', guardedCalls],
      ['tool body, bare (A/A control)', bareCalls],
    ]);
    await interleave(block, 1, [
      ['check, outside an attempt', checks],
      ['check, inside an attempt', () => attempt.run(checks)],
      ['no-op call, bare', bareSync],
      ['no-op call, in an attempt guard', guardedSync],
    ]);
    if (b >= 0) blocks.push(block); // block -1 warms up connections and the JIT
  }
  lease.stop();
  agent.destroy();
  server.close();

  const per = (name: string, count: number): number[] => blocks.map((block) => block.get(name)! / count);
  const quartiles = (values: number[]): string => {
    const sorted = [...values].sort((x, y) => x - y);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
    return `${at(0.25).toFixed(3)}–${at(0.75).toFixed(3)}`;
  };
  const row = (name: string, base: string, count: number, unit: 'µs' | 'ns' = 'µs'): void => {
    const values = per(name, count);
    const ratios = values.map((v, i) => v / per(base, count)[i]!);
    const scale = unit === 'ns' ? 1000 : 1;
    console.log(
      `${name.padEnd(40)} ${(median(values) * scale).toFixed(2).padStart(9)} ${unit}   ` +
        `${median(ratios).toFixed(3)}× of "${base}" (IQR ${quartiles(ratios)})`,
    );
  };
  console.log(
    `lease guard cost (CPU time per operation) — ${machineLine()}, load ${load.range()}, ${BENCH.blocks} blocks, interleaved`,
  );
  row('fetch, no guard', 'fetch, no guard', BENCH.requestsPerBlock);
  row('fetch, guard, outside an attempt', 'fetch, no guard', BENCH.requestsPerBlock);
  row('fetch, guard, inside an attempt', 'fetch, no guard', BENCH.requestsPerBlock);
  row('node:http, guard, outside an attempt', 'node:http, guard, outside an attempt', BENCH.requestsPerBlock);
  row('node:http, guard, inside an attempt', 'node:http, guard, outside an attempt', BENCH.requestsPerBlock);
  row('node:http, outside (A/A control)', 'node:http, guard, outside an attempt', BENCH.requestsPerBlock);
  row('check, outside an attempt', 'check, outside an attempt', BENCH.checksPerBlock, 'ns');
  row('check, inside an attempt', 'check, outside an attempt', BENCH.checksPerBlock, 'ns');
  row('no-op call, bare', 'no-op call, bare', BENCH.checksPerBlock, 'ns');
  row('no-op call, in an attempt guard', 'no-op call, bare', BENCH.checksPerBlock, 'ns');
  row('tool body, bare', 'tool body, bare', BENCH.callsPerBlock);
  row('tool body, in an attempt guard', 'tool body, bare', BENCH.callsPerBlock);
  row('tool body, bare (A/A control)', 'tool body, bare', BENCH.callsPerBlock);
  const added = median(
    per('tool body, in an attempt guard', BENCH.callsPerBlock).map(
      (v, i) => v - per('tool body, bare', BENCH.callsPerBlock)[i]!,
    ),
  );
  console.log(`added per tool call: ${added.toFixed(2)} µs (median over blocks)`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
