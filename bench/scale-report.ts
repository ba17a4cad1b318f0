/**
 * The pure parts of `npm run bench:scale`: the engine's added latency per turn from a run's effect times, the
 * SDK's Prometheus counters, and the report's lines. No I/O, so they are unit-tested
 * (test/unit/bench-scale-report.test.ts).
 */
import { percentile } from './peers/peers-report';

/** When one run started and when the ledger saw each of its steps' first effects (ms, one clock). */
export interface RunTimes {
  startedAt: number;
  /** First effect of step 1, 2, ... in order. */
  effectsAt: readonly number[];
}

/** One turn of a run: its wall time (previous effect, or the start, to its effect) and what the engine added. */
export interface TurnTime {
  wallMs: number;
  /** Wall time minus the simulated model's sleep for that turn. */
  addedMs: number;
}

/**
 * The turns of a run with a step each: turn k ends at the first effect of step k and starts at the effect of
 * step k − 1 (turn 1: when the client asked to start the run). `modelMs(k)` is the simulated model's sleep of
 * turn k; what is left is the engine's (or the floor's) own time plus the tool's POST.
 */
export function turnTimes(run: RunTimes, modelMs: (turn: number) => number): TurnTime[] {
  return run.effectsAt.map((at, i) => {
    const wallMs = at - (i === 0 ? run.startedAt : run.effectsAt[i - 1]!);
    return { wallMs, addedMs: wallMs - modelMs(i + 1) };
  });
}

/** The sum of every sample of counter `name` (all label sets) in a Prometheus text exposition; 0 when absent. */
export function prometheusCounter(text: string, name: string): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (match?.[1] === name || match?.[1] === `${name}_total`) total += Number(match[3]);
  }
  return total;
}

/** The SDK's sticky cache counters (`sticky_cache_hit`, `sticky_cache_miss`, `sticky_cache_total_forced_eviction`). */
export interface StickyCounts {
  /** Workflow tasks of a cached run, with only the new events (incremental). */
  hit: number;
  /** Incremental tasks of a run no longer cached: the worker fetched the whole history. */
  miss: number;
  /**
   * Runs dropped from the cache other than at their end (full cache, a failed or timed-out task): the next task
   * of each comes from the normal queue with the whole history and replays it, counted neither hit nor miss.
   */
  evicted: number;
}

/** The counters' growth between two readings. */
export function stickyBetween(before: StickyCounts, after: StickyCounts): StickyCounts {
  return { hit: after.hit - before.hit, miss: after.miss - before.miss, evicted: after.evicted - before.evicted };
}

/**
 * `H% (E evictions)`: hits over hits, misses and forced evictions (an evicted run's next task replays like a
 * miss); `?` when there was none of them.
 */
export function formatSticky(s: StickyCounts): string {
  const total = s.hit + s.miss + s.evicted;
  return `${total > 0 ? ((s.hit / total) * 100).toFixed(1) : '?'}% (${s.evicted} evictions)`;
}

/** What one phase of bench:scale measured. */
export interface ScalePhaseFigures {
  runs: number;
  turns: TurnTime[];
  /** The worker's highest RSS of the phase above its idle level, per run of the most in flight at once, KB. */
  rssPerRunKb: number;
  cpuPerStepMs: number;
  sticky: StickyCounts;
  historyKbPerRun: number;
  failed: number;
  duplicates: number;
}

/** p50 and p99 of the added latency, and the 99th percentile of the added share of a turn's wall time. */
export function addedLatency(turns: readonly TurnTime[]): { p50: number; p99: number; shareP99: number } {
  const added = turns.map((t) => t.addedMs);
  const share = turns.map((t) => (t.wallMs > 0 ? t.addedMs / t.wallMs : 0));
  return { p50: percentile(added, 50), p99: percentile(added, 99), shareP99: percentile(share, 99) };
}

const f = (v: number, digits = 0): string => (Number.isFinite(v) ? v.toFixed(digits) : '?');

/**
 * The last line: `scale: N runs, engine added p50 Xms p99 Yms per turn (Z% of turn at p99), RSS per run R KB,
 * CPU/step C ms, sticky hit H% (E evictions), history B KB/run, failed F, duplicates D`.
 */
export function formatScaleLine(figures: ScalePhaseFigures, who = 'engine'): string {
  const { p50, p99, shareP99 } = addedLatency(figures.turns);
  return (
    `scale: ${figures.runs} runs, ${who} added p50 ${f(p50)}ms p99 ${f(p99)}ms per turn ` +
    `(${f(shareP99 * 100, 1)}% of turn at p99), RSS per run ${f(figures.rssPerRunKb)} KB, ` +
    `CPU/step ${f(figures.cpuPerStepMs, 2)} ms, sticky hit ${formatSticky(figures.sticky)}, ` +
    `history ${f(figures.historyKbPerRun, 1)} KB/run, failed ${figures.failed}, duplicates ${figures.duplicates}`
  );
}
