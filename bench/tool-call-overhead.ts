/**
 * `npm run bench`: what the durable-tools wrapper costs per tool call, on the tuned dev server.
 *
 * One worker process (a child, so its CPU time is its own) serves a bare Temporal activity doing nothing (also
 * scheduled with the tool calls' UI summary, to show what the summary alone costs) and
 * the same no-op as a tool through the wrapper: read-only; read-only as a local activity (`execution:
 * 'local'`); with effects and no key store; with effects and
 * the SQLite key store; with effects and the Postgres key store. In interleaved rounds (the order rotates)
 * it measures, per configuration:
 * - latency: one workflow making `sequentialCalls` calls one after another (ms per call);
 * - throughput: `concurrentRuns` workflows at once, each making `callsPerRun` sequential calls (calls/s);
 * - the worker process's CPU time per call in each.
 * Printed, never asserted. The last line compares the SQLite-backed tool with effects to the bare activity.
 *
 * Each ratio is the median of per-round ratios: within a round every configuration runs back to back, so a
 * change of the machine's load between rounds (other processes on a shared machine) cancels out of the ratio;
 * the printed range (min–max over rounds) shows how much a single round can swing. A throughput sample is
 * `concurrentRuns × callsPerRun` calls, large enough that starting and ending the runs is a small part of it.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchTemporal } from './bench-temporal';
import { LoadSampler, machineLine, median, rotate } from './bench-report';
import { startChildWorker } from './child-worker';
import { OVERHEAD_WORKER_ENV } from './overhead-worker';
import { OVERHEAD_MODES, type OverheadMode } from './overhead-workflows';

const BENCH = {
  rounds: Number(process.env.BENCH_ROUNDS ?? 6),
  sequentialCalls: 40,
  concurrentRuns: 20,
  callsPerRun: 25,
  warmupCalls: 10,
} as const;

const LABELS: Record<OverheadMode, string> = {
  bare: 'bare activity',
  bareSummary: 'bare activity + summary',
  readOnly: 'tool, read-only',
  readOnlyLocal: 'tool, read-only, local',
  effectsNoStore: 'tool with effects, no store',
  effectsSqlite: 'tool with effects, SQLite',
  effectsPostgres: 'tool with effects, Postgres',
};

interface Samples {
  latencyMs: number[];
  latencyCpuMs: number[];
  callsPerSecond: number[];
  throughputCpuMs: number[];
}

async function main(): Promise<void> {
  const temporal = await benchTemporal();
  const dir = mkdtempSync(join(tmpdir(), 'durable-tools-bench-'));
  const taskQueue = `bench-overhead-${randomUUID().slice(0, 8)}`;
  const worker = await startChildWorker(require.resolve('./overhead-worker'), {
    [OVERHEAD_WORKER_ENV.address]: temporal.address,
    [OVERHEAD_WORKER_ENV.namespace]: temporal.namespace,
    [OVERHEAD_WORKER_ENV.taskQueue]: taskQueue,
    [OVERHEAD_WORKER_ENV.sqlitePath]: join(dir, 'idempotency.sqlite'),
    [OVERHEAD_WORKER_ENV.postgresUrl]:
      process.env.DURABLE_TOOLS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    [OVERHEAD_WORKER_ENV.postgresTable]: `bench_keys_${process.pid}_${Date.now().toString(36)}`,
  });
  const run = (mode: OverheadMode, count: number) =>
    temporal.client.workflow.execute('sequentialCalls', {
      taskQueue,
      workflowId: `bench-${mode}-${randomUUID()}`,
      args: [mode, count],
    });
  const samples = Object.fromEntries(
    OVERHEAD_MODES.map((mode) => [mode, { latencyMs: [], latencyCpuMs: [], callsPerSecond: [], throughputCpuMs: [] }]),
  ) as unknown as Record<OverheadMode, Samples>;
  const load = new LoadSampler();
  try {
    for (const mode of OVERHEAD_MODES) await run(mode, BENCH.warmupCalls);
    for (let round = 0; round < BENCH.rounds; round++) {
      for (const mode of rotate(OVERHEAD_MODES, round)) {
        const cpu0 = await worker.cpuMs();
        const t0 = performance.now();
        await run(mode, BENCH.sequentialCalls);
        const ms = performance.now() - t0;
        const cpu1 = await worker.cpuMs();
        samples[mode].latencyMs.push(ms / BENCH.sequentialCalls);
        samples[mode].latencyCpuMs.push((cpu1 - cpu0) / BENCH.sequentialCalls);
      }
      for (const mode of rotate(OVERHEAD_MODES, round)) {
        const calls = BENCH.concurrentRuns * BENCH.callsPerRun;
        const cpu0 = await worker.cpuMs();
        const t0 = performance.now();
        await Promise.all(Array.from({ length: BENCH.concurrentRuns }, () => run(mode, BENCH.callsPerRun)));
        const ms = performance.now() - t0;
        const cpu1 = await worker.cpuMs();
        samples[mode].callsPerSecond.push((calls / ms) * 1000);
        samples[mode].throughputCpuMs.push((cpu1 - cpu0) / calls);
      }
      process.stderr.write(`round ${round + 1}/${BENCH.rounds} done (load ${load.sample().toFixed(1)})\n`);
    }
  } finally {
    await worker.stop();
    await temporal.close();
    rmSync(dir, { recursive: true, force: true });
  }

  const m = (mode: OverheadMode, field: keyof Samples) => median(samples[mode][field]);
  const latency = (mode: OverheadMode) => pairedRatio(samples[mode].latencyMs, samples.bare.latencyMs);
  const throughput = (mode: OverheadMode) => pairedRatio(samples[mode].callsPerSecond, samples.bare.callsPerSecond);
  console.log(
    `${BENCH.rounds} interleaved rounds on ${temporal.startedServer ? 'a tuned in-memory dev server started by the bench' : `the server at ${temporal.address}`}; ` +
      `latency: ${BENCH.sequentialCalls} sequential calls in one run; throughput: ${BENCH.concurrentRuns} runs at once × ${BENCH.callsPerRun} sequential calls`,
  );
  console.log(
    `${'configuration'.padEnd(30)}${'ms/call'.padStart(9)}${'CPU ms'.padStart(9)}${'calls/s'.padStart(10)}${'CPU ms'.padStart(9)}${'latency'.padStart(19)}${'throughput'.padStart(19)}`,
  );
  for (const mode of OVERHEAD_MODES) {
    console.log(
      `${LABELS[mode].padEnd(30)}${m(mode, 'latencyMs').toFixed(2).padStart(9)}${m(mode, 'latencyCpuMs').toFixed(2).padStart(9)}` +
        `${m(mode, 'callsPerSecond').toFixed(0).padStart(10)}${m(mode, 'throughputCpuMs').toFixed(2).padStart(9)}` +
        `${latency(mode).text.padStart(19)}${throughput(mode).text.padStart(19)}`,
    );
  }
  console.log(
    '(medians of rounds; CPU ms = worker process CPU time per call; x = median of per-round ratios to the bare activity, range in brackets)',
  );
  console.log(`machine: ${machineLine()}; load average during the rounds ${load.range()}`);
  console.log(
    `tool-call overhead: latency x${latency('effectsSqlite').median.toFixed(2)}, ` +
      `throughput x${throughput('effectsSqlite').median.toFixed(2)}`,
  );
}

/** Median and range of `values[i] / baseline[i]` over the rounds. */
function pairedRatio(values: readonly number[], baseline: readonly number[]): { median: number; text: string } {
  const ratios = values.map((value, i) => value / (baseline[i] ?? Number.NaN));
  const mid = median(ratios);
  return {
    median: mid,
    text: `x${mid.toFixed(2)} [${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}]`,
  };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
