import {
  addedLatency,
  formatBound,
  formatMemoryLine,
  formatScaleLine,
  formatSticky,
  poolRounds,
  prometheusCounter,
  turnTimes,
  type PhaseCpu,
  type ScalePhaseFigures,
} from '../../bench/scale-report';
import { busyCoresBetween } from '../../bench/scale-machine-cpu';
import { SIMULATED_MODEL_MS, simulatedModelMs } from '../../bench/scale-model';
import { arrivalMs } from '../../bench/scale-runs';

describe('the turns of a bench:scale run', () => {
  test('a turn runs from the previous effect, the first from the start, and the engine adds what the model did not sleep', () => {
    const turns = turnTimes({ startedAt: 1_000, effectsAt: [1_600, 2_700] }, (turn) => (turn === 1 ? 550 : 1_000));
    expect(turns).toEqual([
      { wallMs: 600, addedMs: 50 },
      { wallMs: 1_100, addedMs: 100 },
    ]);
  });

  test('the added latency is reported at p50 and p99, with its share of the turn at p99', () => {
    const turns = Array.from({ length: 100 }, (_, i) => ({ wallMs: 1_000, addedMs: i + 1 }));
    expect(addedLatency(turns)).toEqual({ p50: 50, p99: 99, shareP99: 0.099 });
  });
});

describe('the simulated model of bench:scale', () => {
  test('a turn sleeps between 0.5 and 3 s, the same for the same seed, run index and turn on every system', () => {
    const draws = Array.from({ length: 500 }, (_, i) => simulatedModelMs(7, `scale-e-${i}`, 3));
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(SIMULATED_MODEL_MS.min);
    expect(Math.max(...draws)).toBeLessThanOrEqual(SIMULATED_MODEL_MS.max);
    expect(simulatedModelMs(7, 'scale-e-12', 3)).toBe(simulatedModelMs(7, 'scale-p-12', 3));
    expect(new Set(draws).size).toBeGreaterThan(300);
  });

  test('another seed draws other latencies', () => {
    const a = Array.from({ length: 20 }, (_, i) => simulatedModelMs(1, `scale-e-${i}`, 1));
    const b = Array.from({ length: 20 }, (_, i) => simulatedModelMs(2, `scale-e-${i}`, 1));
    expect(a).not.toEqual(b);
  });
});

describe('the figures of bench:scale', () => {
  test('a Prometheus counter is the sum of its label sets, with or without the _total suffix', () => {
    const text = [
      '# HELP temporal_sticky_cache_hit x',
      'temporal_sticky_cache_hit{task_queue="a"} 7',
      'temporal_sticky_cache_hit_total{task_queue="b"} 3',
      'temporal_sticky_cache_miss{task_queue="a"} 2',
    ].join('\n');
    expect(prometheusCounter(text, 'temporal_sticky_cache_hit')).toBe(10);
    expect(prometheusCounter(text, 'temporal_sticky_cache_size')).toBe(0);
  });

  test('the last line gives the added latency, memory, CPU, cache, history and failures', () => {
    const turns = Array.from({ length: 100 }, (_, i) => ({ wallMs: 2_000, addedMs: i + 1 }));
    expect(
      formatScaleLine({
        runs: 200,
        turns,
        rssPerRunKb: 180.4,
        cpuPerStepMs: 3.456,
        sticky: { hit: 987, miss: 3, evicted: 10 },
        historyKbPerRun: 12.34,
        failed: 0,
        duplicates: 0,
      }),
    ).toBe(
      'scale: 200 runs, engine added p50 50ms p99 99ms per turn (5.0% of turn at p99), RSS per run 180 KB, ' +
        'CPU/step 3.46 ms, sticky hit 98.7% (10 evictions), history 12.3 KB/run, failed 0, duplicates 0',
    );
  });
});

describe('the sticky cache figure of bench:scale', () => {
  test('a forced eviction counts against the hit rate, as the replay it causes', () => {
    expect(formatSticky({ hit: 90, miss: 0, evicted: 10 })).toBe('90.0% (10 evictions)');
  });

  test('a phase without workflow tasks of cached runs has no hit rate', () => {
    expect(formatSticky({ hit: 0, miss: 0, evicted: 0 })).toBe('?% (0 evictions)');
  });
});

describe('where the bound of bench:scale is', () => {
  const cpu: PhaseCpu = {
    cores: 2,
    busyCores: 1.9,
    workerCores: 1.3,
    serverCores: 0.45,
    serverCpuPerStepMs: 1.5,
    peakInFlight: 300,
    meanTurnMs: 2_000,
  };

  test('a machine at least 85% busy is the bound, split between the worker, the server and everything else', () => {
    expect(formatBound(cpu, 8.5)).toBe(
      "bound: CPU, the machine's 2 cores 95% busy (worker 1.30, Temporal server 0.45, everything else 0.15 cores) " +
        "at 300 runs in flight; at 10.00 ms of CPU per step (worker 8.50, server 1.50) and a step every 2000 ms per run (the model's pace), " +
        'one core carries ~200 runs in flight: 2000 need ~10.0 cores',
    );
  });

  test('below that the bound is not reached, and the line still says what the CPU per step carries', () => {
    expect(formatBound({ ...cpu, busyCores: 0.8, workerCores: 0.5, serverCores: 0.2 }, 3)).toBe(
      "bound: not reached at 300 runs in flight (the machine's 2 cores 40% busy: worker 0.50, Temporal server 0.20, " +
        'everything else 0.10 cores); at 4.50 ms of CPU per step (worker 3.00, server 1.50) and a step every 2000 ms ' +
        "per run (the model's pace), one core carries ~444 runs in flight: 2000 need ~4.5 cores",
    );
  });

  test('a worker whose main thread took 85% of a core is the bound on a machine with cores to spare', () => {
    const threadsPerStepMs = { main: 4, core: 1, other: 2 };
    expect(formatBound({ ...cpu, busyCores: 1.2, mainThreadCores: 0.92, threadsPerStepMs }, 7)).toBe(
      "bound: the worker's main thread, 92% of a core, at 300 runs in flight (the machine's 2 cores 60% busy: " +
        'worker 1.30, Temporal server 0.45, everything else 0.00 cores); at 8.50 ms of CPU per step (worker 7.00 ' +
        '(main thread 4.00, Temporal core 1.00, other threads 2.00), server 1.50) and a step every 2000 ms per run ' +
        "(the model's pace), one core carries ~235 runs in flight: 2000 need ~8.5 cores; the worker's main thread carries ~500",
    );
  });

  test("the machine's busy cores come from the busy share of all cores' ticks between two readings", () => {
    expect(busyCoresBetween({ busyTicks: 100, totalTicks: 1_000 }, { busyTicks: 250, totalTicks: 1_200 }, 2)).toBe(1.5);
    expect(busyCoresBetween({ busyTicks: 1, totalTicks: 1 }, { busyTicks: 1, totalTicks: 1 }, 2)).toBe(0);
  });
});

describe('the rounds of bench:scale', () => {
  const round = (addedMs: number, cpuPerStepMs: number, steps: number): ScalePhaseFigures => ({
    runs: 10,
    turns: Array.from({ length: steps }, () => ({ wallMs: 1_000, addedMs })),
    rssPerRunKb: addedMs,
    cpuPerStepMs,
    sticky: { hit: 10, miss: 1, evicted: 2 },
    historyKbPerRun: 10,
    failed: 1,
    duplicates: 0,
  });

  test("a system's rounds pool their turns, weigh CPU per step by steps, keep the largest RSS and add the counts", () => {
    const pooled = poolRounds([round(10, 4, 100), round(30, 8, 300)]);
    expect(pooled.turns).toHaveLength(400);
    expect(pooled.cpuPerStepMs).toBe(7);
    expect(pooled.rssPerRunKb).toBe(30);
    expect(pooled.sticky).toEqual({ hit: 20, miss: 2, evicted: 4 });
    expect(pooled.failed).toBe(2);
    expect(pooled.historyKbPerRun).toBe(10);
  });

  test("the memory line gives the worker's memory after each batch, its growth and the stores' growth per run", () => {
    const mb = 1024;
    expect(
      formatMemoryLine('engine', 100, 300 * mb, [
        { rssKb: 400 * mb, heapUsedKb: 60 * mb, storeBytes: 1_048_576 },
        { rssKb: 410 * mb, heapUsedKb: 61 * mb, storeBytes: 2_097_152 },
        { rssKb: 405 * mb, heapUsedKb: 60 * mb, storeBytes: 3_145_728 },
      ]),
    ).toBe(
      'memory engine: RSS after each batch of 100 runs 400, 410, 405 MB (idle 300 MB), main-thread heap after GC ' +
        '60, 61, 60 MB; from the first batch to the last +5.0 MB RSS, +0.0 MB heap; stores 1.0, 2.0, 3.0 MB ' +
        '(+10.2 KB per run completed)',
    );
  });
});

describe('the arrivals of a bench:scale phase', () => {
  test('runs arrive evenly over the ramp, the first at once and none at its end', () => {
    expect([0, 1, 2, 3].map((i) => arrivalMs(i, 4, 10_000))).toEqual([0, 2_500, 5_000, 7_500]);
  });

  test('without a ramp, or with one run, every run arrives at once', () => {
    expect(arrivalMs(3, 4, 0)).toBe(0);
    expect(arrivalMs(0, 1, 10_000)).toBe(0);
  });
});
