import { addedLatency, formatScaleLine, formatSticky, prometheusCounter, turnTimes } from '../../bench/scale-report';
import { SIMULATED_MODEL_MS, simulatedModelMs } from '../../bench/scale-model';

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
