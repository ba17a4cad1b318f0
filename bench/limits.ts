/**
 * `npm run bench:limits` (issue 46): per-tool limits and the shared backoff across worker processes.
 *
 * Three worker processes (test/support/limits-worker.ts) share a SQLite tool limit store and run `limited_call`
 * with `concurrency: { max: 5 }` and `rateLimit: { perSecond: 20 }` against a local downstream that counts, by its
 * own clock, how many requests are in progress at once and how many arrive in any second.
 *
 * 1. Limits: `--runs` runs (default 50) of `--calls` parallel calls (default 10), one key. Concurrency violations:
 *    arrivals with more than 5 in progress; rate violations: windows of 1 s (from an arrival) with more than 20;
 *    throughput: calls per second from the first arrival to the last answer, over the limit (20 per second; the
 *    downstream holds each request `--hold-ms`, default 100 ms, so 5 at once allow 50 per second).
 * 2. Retry-After: the downstream answers the first request of a key 429 `Retry-After: 2` (one run of one call); once
 *    it did, `--probe-runs` runs (default 10) of `--calls` calls each start on that key; probes: requests of the key
 *    that arrived within those 2 s (a request already sent when the 429 came is not the breaker's to stop).
 *
 * `--small`: 8 runs of 5 calls, 3 probe runs (a check that it works). Last line:
 * `limits: concurrency violations V, rate violations R, throughput xT of the limit, probes during Retry-After P`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { ChildProcess } from 'node:child_process';
import { benchTemporal } from './bench-temporal';
import { writeWorkflowBundle } from './bench-setup';
import { startAgentRun, waitForAgentRun } from '../src/client/agent-run-client';
import type { ScriptedTurn } from '../src/model/scripted-model';
import { startLimitsDownstream, type LimitsDownstream } from '../test/support/limits-downstream';
import { LIMITS_WORKER } from '../test/support/limits-worker';
import { killProcess, spawnWorkerProcess } from '../test/support/worker-process';

const LIMITS = { concurrency: 5, perSecond: 20, retryAfterSeconds: 2 } as const;

interface BenchOptions {
  runs: number;
  calls: number;
  probeRuns: number;
  workers: number;
  holdMs: number;
}

function options(): BenchOptions {
  const { values } = parseArgs({
    options: {
      small: { type: 'boolean' },
      runs: { type: 'string' },
      calls: { type: 'string' },
      'probe-runs': { type: 'string' },
      workers: { type: 'string' },
      'hold-ms': { type: 'string' },
    },
  });
  const small = values.small === true;
  const int = (value: string | undefined, fallback: number) => (value === undefined ? fallback : Number(value));
  return {
    runs: int(values.runs, small ? 8 : 50),
    calls: int(values.calls, small ? 5 : 10),
    probeRuns: int(values['probe-runs'], small ? 3 : 10),
    workers: int(values.workers, 3),
    holdMs: int(values['hold-ms'], 100),
  };
}

async function main(): Promise<void> {
  const opts = options();
  const workDir = mkdtempSync(join(tmpdir(), 'durable-tools-limits-'));
  const temporal = await benchTemporal();
  const children: ChildProcess[] = [];
  let downstream: LimitsDownstream | undefined;
  try {
    const bundlePath = await writeWorkflowBundle(workDir);
    downstream = await startLimitsDownstream(opts.holdMs);
    const taskQueue = `bench-limits-${Date.now().toString(36)}`;
    const env = LIMITS_WORKER.env;
    for (let i = 0; i < opts.workers; i += 1) {
      children.push(
        await spawnWorkerProcess(
          LIMITS_WORKER.script,
          {
            [env.address]: temporal.address,
            [env.namespace]: temporal.namespace,
            [env.taskQueue]: taskQueue,
            [env.bundlePath]: bundlePath,
            [env.keysPath]: join(workDir, `keys-${i}.sqlite`),
            [env.transcriptsPath]: join(workDir, `transcripts-${i}.sqlite`),
            [env.url]: downstream.url,
            [env.limitsDb]: join(workDir, 'limits.sqlite'),
            [env.concurrency]: String(LIMITS.concurrency),
            [env.perSecond]: String(LIMITS.perSecond),
          },
          LIMITS_WORKER.ready,
        ),
      );
    }
    console.log(`limits: ${opts.workers} workers, ${JSON.stringify(opts)}, load ${loadText()}`);
    const run = (account: string) => startCallRun(temporal.client, taskQueue, account, opts.calls);

    const firstLimited = downstream.requests.length;
    const limited = await Promise.all(Array.from({ length: opts.runs }, () => run('acct-limits')));
    await expectCompleted(limited);
    const phase1 = downstream.requests.slice(firstLimited);
    const spanS = (Math.max(...phase1.map((r) => r.answeredAtMs ?? r.atMs)) - phase1[0]!.atMs) / 1000;
    const throughput = phase1.length / spanS / LIMITS.perSecond;
    const concurrency = downstream.concurrencyViolations(LIMITS.concurrency);
    const rate = downstream.rateViolations(LIMITS.perSecond, 1_000);
    console.log(
      `limits: ${phase1.length} calls in ${spanS.toFixed(1)} s (${(phase1.length / spanS).toFixed(1)}/s), ` +
        `most in progress at once ${downstream.maxInFlight()}, load ${loadText()}`,
    );

    // The first call of the key meets the 429; the runs started while it pauses must wait it out, then probe once.
    const order = downstream.answer429('acct-probe', LIMITS.retryAfterSeconds);
    const first = await startCallRun(temporal.client, taskQueue, 'acct-probe', 1);
    while (order.answeredAtMs === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
    const probeRuns = await Promise.all(Array.from({ length: opts.probeRuns }, () => run('acct-probe')));
    await expectCompleted([first, ...probeRuns]);
    const probes = downstream.requestsDuring(order).length;
    console.log(`limits: Retry-After phase ${opts.probeRuns} runs x ${opts.calls} calls, load ${loadText()}`);
    console.log(
      `limits: concurrency violations ${concurrency}, rate violations ${rate}, ` +
        `throughput x${throughput.toFixed(2)} of the limit, probes during Retry-After ${probes}`,
    );
  } finally {
    for (const child of children) await killProcess(child).catch(() => {});
    await downstream?.close();
    await temporal.close();
    rmSync(workDir, { recursive: true, force: true });
  }
}

function startCallRun(client: Parameters<typeof startAgentRun>[0], taskQueue: string, account: string, calls: number) {
  const script: ScriptedTurn[] = [
    { toolCalls: Array.from({ length: calls }, (_, n) => ({ name: 'limited_call', arguments: { account, n } })) },
    { text: 'done', final: true },
  ];
  return startAgentRun(
    client,
    { goal: 'bench limits', model: { provider: 'scripted', script }, parallelToolCalls: true },
    { taskQueue },
  );
}

async function expectCompleted(handles: Awaited<ReturnType<typeof startAgentRun>>[]): Promise<void> {
  const results = await Promise.all(handles.map((handle) => waitForAgentRun(handle)));
  const failed = results.flatMap((r) => r.steps).filter((s) => s.observation?.status !== 'ok');
  if (results.some((r) => r.status !== 'completed') || failed.length > 0) {
    throw new Error(`limits: ${failed.length} calls did not succeed: ${JSON.stringify(failed[0]?.observation)}`);
  }
}

function loadText(): string {
  return loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
