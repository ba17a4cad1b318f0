/**
 * `npx tsx bench/lease-guard-cost.ts`: what the request lease guard (docs/exactly-once.md) costs.
 *
 * - Per request: `fetch` and `node:http` (keep-alive agent) POSTs to a local server, without the guard
 *   installed, with it installed outside a tool attempt, and inside an attempt whose lease is alive (the
 *   check runs and passes).
 * - Per tool call: an async no-op "tool body" (a few awaits, like a tool doing light work) run bare and run
 *   through `AttemptRequestGuard.run`, the way the wrapper runs every tool attempt.
 *
 * Interleaved rounds, the order rotating: each ratio is the median of per-round ratios (a load change between
 * rounds cancels out), with the min–max over rounds. Printed, never asserted.
 */
import { createServer, request as httpRequest, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import {
  AttemptRequestGuard,
  installRequestLeaseGuard,
  uninstallRequestLeaseGuard,
} from '../src/activities/request-lease-guard';
import { ToolCallLease } from '../src/activities/tool-call-lease';
import { MemoryIdempotencyStore } from '../src/idempotency/memory-idempotency-store';
import { LoadSampler, machineLine, median, rotate } from './bench-report';

const BENCH = {
  rounds: Number(process.env.BENCH_ROUNDS ?? 8),
  requestsPerSample: 400,
  callsPerSample: 20_000,
  awaitsPerCall: 5,
} as const;

type RequestMode = 'not installed' | 'installed, outside an attempt' | 'inside an attempt';
const REQUEST_MODES: RequestMode[] = ['not installed', 'installed, outside an attempt', 'inside an attempt'];

/** A lease that owns a key and will not lose it while the benchmark runs (a minute, renewed never). */
function liveLease(): ToolCallLease {
  const lease = new ToolCallLease({ key: 'bench/1', leaseMs: 600_000, heartbeat: () => {}, log: console });
  lease.owned(new MemoryIdempotencyStore(), 'token', performance.now(), '1');
  return lease;
}

async function main(): Promise<void> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/effects`;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const lease = liveLease();
  const load = new LoadSampler();

  const viaFetch = async (): Promise<void> => {
    await (await fetch(url, { method: 'POST', body: '{}' })).text();
  };
  const viaHttp = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const req = httpRequest(url, { method: 'POST', agent }, (res) => res.resume().on('end', resolve));
      req.on('error', reject);
      req.end('{}');
    });
  const requestSample = async (send: () => Promise<void>, mode: RequestMode): Promise<number> => {
    if (mode === 'not installed') uninstallRequestLeaseGuard();
    else installRequestLeaseGuard();
    const loop = async (): Promise<number> => {
      const start = performance.now();
      for (let i = 0; i < BENCH.requestsPerSample; i++) await send();
      return ((performance.now() - start) * 1000) / BENCH.requestsPerSample; // µs per request
    };
    return mode === 'inside an attempt' ? new AttemptRequestGuard(lease).run(loop) : loop();
  };

  const body = async (): Promise<number> => {
    let n = 0;
    for (let i = 0; i < BENCH.awaitsPerCall; i++) n += await Promise.resolve(i);
    return n;
  };
  const callSample = async (guarded: boolean): Promise<number> => {
    installRequestLeaseGuard();
    const start = performance.now();
    for (let i = 0; i < BENCH.callsPerSample; i++) {
      if (!guarded) {
        await body();
        continue;
      }
      const guard = new AttemptRequestGuard(lease);
      await guard.run(body);
      guard.end();
    }
    return ((performance.now() - start) * 1000) / BENCH.callsPerSample; // µs per call
  };

  const samples = new Map<string, number[]>();
  const add = (name: string, value: number): void => void samples.set(name, [...(samples.get(name) ?? []), value]);
  // Warm-up: connections, JIT.
  for (const mode of REQUEST_MODES) {
    await requestSample(viaFetch, mode);
    await requestSample(viaHttp, mode);
  }
  await callSample(false);
  await callSample(true);
  for (let round = 0; round < BENCH.rounds; round++) {
    load.sample();
    for (const mode of rotate(REQUEST_MODES, round)) {
      add(`fetch|${mode}`, await requestSample(viaFetch, mode));
      add(`http|${mode}`, await requestSample(viaHttp, mode));
    }
    for (const guarded of rotate([false, true], round)) add(`call|${guarded}`, await callSample(guarded));
  }
  lease.stop();
  agent.destroy();
  server.close();

  const ratio = (name: string, base: string): string => {
    const values = samples.get(name)!.map((v, i) => v / samples.get(base)![i]!);
    return `${median(values).toFixed(3)}× (rounds ${Math.min(...values).toFixed(3)}–${Math.max(...values).toFixed(3)})`;
  };
  const line = (label: string, name: string, base: string): void =>
    console.log(`${label.padEnd(54)} ${median(samples.get(name)!).toFixed(2).padStart(9)} µs   ${ratio(name, base)}`);
  console.log(`lease guard cost — ${machineLine()}, load ${load.range()}, ${BENCH.rounds} interleaved rounds`);
  for (const client of ['fetch', 'http'] as const) {
    for (const mode of REQUEST_MODES) {
      line(
        `${client === 'fetch' ? 'fetch' : 'node:http'} per request, ${mode}`,
        `${client}|${mode}`,
        `${client}|not installed`,
      );
    }
  }
  line(`tool body (${BENCH.awaitsPerCall} awaits), bare`, 'call|false', 'call|false');
  line(`tool body (${BENCH.awaitsPerCall} awaits), in an attempt guard`, 'call|true', 'call|false');
  const added = median(samples.get('call|true')!.map((v, i) => v - samples.get('call|false')![i]!));
  console.log(`added per tool call: ${added.toFixed(2)} µs (median of per-round differences)`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
