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
  /** The worker's CPU (user + system) over the phase per step, ms. */
  cpuPerStepMs: number;
  sticky: StickyCounts;
  historyKbPerRun: number;
  failed: number;
  duplicates: number;
  /** Where the CPU went during the phase (absent from figures made before it was measured). */
  cpu?: PhaseCpu;
}

/** Where the machine's CPU went during one phase. */
export interface PhaseCpu {
  /** The machine's cores. */
  cores: number;
  /** Cores busy on average over the phase, everything on the machine (`/proc/stat`). */
  busyCores: number;
  /** Of those, the worker process's. */
  workerCores: number;
  /** Of those, the Temporal server's (the phase's dev server). */
  serverCores: number;
  /** The Temporal server's CPU per step, ms. */
  serverCpuPerStepMs: number;
  /** The most runs in flight at once (sampled every second). */
  peakInFlight: number;
  /**
   * The model's mean sleep per turn, ms: the pace of a run the engine adds nothing to (a saturated machine's
   * turns are longer, and would flatter the runs one core carries).
   */
  meanTurnMs: number;
  /** The worker's CPU per step by thread group, ms (bench/scale-worker-process.ts, `ThreadCpu`). */
  threadsPerStepMs?: { main: number; core: number; other: number };
  /** The worker's main thread's CPU over the phase, in cores (at most 1: it is one thread). */
  mainThreadCores?: number;
}

/** The machine is the bound when this share of its cores was busy over a phase. */
export const CPU_SATURATED_SHARE = 0.85;

/** Runs in flight `npm run bench:scale` aims at on one worker (issue 47). */
export const SCALE_GOAL_RUNS = 2_000;

const cores = (v: number): string => v.toFixed(2);

/**
 * Where the bound of a phase is: `bound: CPU, the machine's C cores P% busy (worker W, Temporal server S,
 * everything else E cores) at N runs in flight` when at least {@link CPU_SATURATED_SHARE} of the cores were busy,
 * else `bound: not reached at N runs in flight (...)`; then what the CPU per step carries: one core per K runs in
 * flight, and the cores {@link SCALE_GOAL_RUNS} runs would need.
 */
export function formatBound(cpu: PhaseCpu, workerCpuPerStepMs: number): string {
  const busyShare = cpu.cores > 0 ? cpu.busyCores / cpu.cores : 0;
  const split =
    `worker ${cores(cpu.workerCores)}, Temporal server ${cores(cpu.serverCores)}, everything else ` +
    `${cores(Math.max(0, cpu.busyCores - cpu.workerCores - cpu.serverCores))} cores`;
  const mainShare = cpu.threadsPerStepMs && cpu.mainThreadCores !== undefined ? cpu.mainThreadCores : Number.NaN;
  const where =
    busyShare >= CPU_SATURATED_SHARE
      ? `bound: CPU, the machine's ${cpu.cores} cores ${f(busyShare * 100)}% busy (${split}) at ${cpu.peakInFlight} runs in flight`
      : mainShare >= CPU_SATURATED_SHARE
        ? `bound: the worker's main thread, ${f(mainShare * 100)}% of a core, at ${cpu.peakInFlight} runs in flight (the machine's ${cpu.cores} cores ${f(busyShare * 100)}% busy: ${split})`
        : `bound: not reached at ${cpu.peakInFlight} runs in flight (the machine's ${cpu.cores} cores ${f(busyShare * 100)}% busy: ${split})`;
  const perStep = workerCpuPerStepMs + cpu.serverCpuPerStepMs;
  const runsPerCore = perStep > 0 ? cpu.meanTurnMs / perStep : Number.NaN;
  const threads = cpu.threadsPerStepMs;
  const byThread = threads
    ? ` (main thread ${f(threads.main, 2)}, Temporal core ${f(threads.core, 2)}, other threads ${f(threads.other, 2)})`
    : '';
  const mainCarries =
    threads && threads.main > 0 ? `; the worker's main thread carries ~${f(cpu.meanTurnMs / threads.main)}` : '';
  return (
    `${where}; at ${f(perStep, 2)} ms of CPU per step (worker ${f(workerCpuPerStepMs, 2)}${byThread}, server ` +
    `${f(cpu.serverCpuPerStepMs, 2)}) and a step every ${f(cpu.meanTurnMs)} ms per run (the model's pace), one core carries ~${f(runsPerCore)} ` +
    `runs in flight: ${SCALE_GOAL_RUNS} need ~${f(SCALE_GOAL_RUNS / runsPerCore, 1)} cores${mainCarries}`
  );
}

/** The figures of several rounds of one system as one: turns pooled, CPU per step over all steps, counters summed. */
export function poolRounds(rounds: readonly ScalePhaseFigures[]): ScalePhaseFigures {
  const steps = (r: ScalePhaseFigures) => r.turns.length || 1;
  const totalSteps = rounds.reduce((sum, r) => sum + steps(r), 0);
  const weighted = (value: (r: ScalePhaseFigures) => number) =>
    rounds.reduce((sum, r) => sum + value(r) * steps(r), 0) / totalSteps;
  const sum = (value: (r: ScalePhaseFigures) => number) => rounds.reduce((total, r) => total + value(r), 0);
  const withCpu = rounds.filter((r) => r.cpu !== undefined);
  const pooled: ScalePhaseFigures = {
    runs: rounds[0]?.runs ?? 0,
    turns: rounds.flatMap((r) => r.turns),
    rssPerRunKb: Math.max(...rounds.map((r) => r.rssPerRunKb)),
    cpuPerStepMs: weighted((r) => r.cpuPerStepMs),
    sticky: { hit: sum((r) => r.sticky.hit), miss: sum((r) => r.sticky.miss), evicted: sum((r) => r.sticky.evicted) },
    historyKbPerRun: sum((r) => r.historyKbPerRun) / Math.max(rounds.length, 1),
    failed: sum((r) => r.failed),
    duplicates: sum((r) => r.duplicates),
  };
  if (withCpu.length > 0) {
    const mean = (value: (c: PhaseCpu) => number) => withCpu.reduce((t, r) => t + value(r.cpu!), 0) / withCpu.length;
    pooled.cpu = {
      cores: withCpu[0]!.cpu!.cores,
      busyCores: mean((c) => c.busyCores),
      workerCores: mean((c) => c.workerCores),
      serverCores: mean((c) => c.serverCores),
      serverCpuPerStepMs: mean((c) => c.serverCpuPerStepMs),
      peakInFlight: Math.max(...withCpu.map((r) => r.cpu!.peakInFlight)),
      meanTurnMs: mean((c) => c.meanTurnMs),
    };
    const mains = withCpu.map((r) => r.cpu!.mainThreadCores).filter((m) => m !== undefined);
    if (mains.length > 0) pooled.cpu.mainThreadCores = mains.reduce((t, m) => t + m, 0) / mains.length;
    const threaded = withCpu.map((r) => r.cpu!.threadsPerStepMs).filter((t) => t !== undefined);
    if (threaded.length > 0) {
      const meanOf = (key: 'main' | 'core' | 'other') => threaded.reduce((t, x) => t + x[key], 0) / threaded.length;
      pooled.cpu.threadsPerStepMs = { main: meanOf('main'), core: meanOf('core'), other: meanOf('other') };
    }
  }
  return pooled;
}

/** The worker's memory after each batch of runs had completed, KB (bench/scale-worker-process.ts). */
export interface BatchMemory {
  rssKb: number;
  heapUsedKb: number;
  /** Bytes of the engine's durable stores (`.data/`) after the batch; absent for the floor. */
  storeBytes?: number;
}

/**
 * `memory <who>: RSS after each batch of N runs A, B, C MB (idle I MB), main-thread heap after GC ..., growth from
 * the first batch to the last +G MB RSS, +H MB heap[, stores S MB (+T KB per run completed)]`.
 */
export function formatMemoryLine(
  who: string,
  runsPerBatch: number,
  idleKb: number,
  batches: readonly BatchMemory[],
): string {
  const mb = (kb: number) => (kb / 1024).toFixed(0);
  const signed = (kb: number) => `${kb >= 0 ? '+' : '−'}${(Math.abs(kb) / 1024).toFixed(1)}`;
  const first = batches[0];
  const last = batches[batches.length - 1];
  let line =
    `memory ${who}: RSS after each batch of ${runsPerBatch} runs ${batches.map((b) => mb(b.rssKb)).join(', ')} MB ` +
    `(idle ${mb(idleKb)} MB), main-thread heap after GC ${batches.map((b) => mb(b.heapUsedKb)).join(', ')} MB`;
  if (first && last && batches.length > 1)
    line += `; from the first batch to the last ${signed(last.rssKb - first.rssKb)} MB RSS, ${signed(last.heapUsedKb - first.heapUsedKb)} MB heap`;
  const stores = batches.map((b) => b.storeBytes).filter((b): b is number => b !== undefined);
  if (stores.length > 0) {
    const growth =
      stores.length > 1 ? (stores[stores.length - 1]! - stores[0]!) / ((stores.length - 1) * runsPerBatch) : Number.NaN;
    line += `; stores ${stores.map((b) => (b / 1024 / 1024).toFixed(1)).join(', ')} MB`;
    if (Number.isFinite(growth)) line += ` (+${(growth / 1024).toFixed(1)} KB per run completed)`;
  }
  return line;
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
