/**
 * `npm run bench:scale [-- --runs N] [-- --rounds R] [-- --turns T] [-- --park-seconds S] [-- --seed K]
 * [-- --ramp-seconds A] [-- --regular] [-- --slots N] [-- --compare-slots M] [-- --compare-fsync-in-commit] [-- --no-floor]
 * [-- --no-approvals]`: the engine where agents live. N agent runs at once (default 2,000; they arrive evenly over A seconds, default 10, so that their first turns do not all meet at the server) on one worker process, each of T turns (default 10) of a simulated model whose latency is drawn from 0.5–3 s (seeded,
 * bench/scale-model.ts) followed by a tool with effects (a POST to a local ledger under the call's key; the
 * ledger counts duplicates), then a final answer. The runs take the fast path (`fastPath: true`, set explicitly;
 * `--regular`: `fastPath: false`).
 *
 * R rounds (default 3): each round runs one batch of N runs on every system in turn (the engine, the plain Temporal
 * floor, with `--compare-slots M` the engine on M slots, with `--compare-fsync-in-commit` the engine with its key
 * store's fsync inside the commit as before 2026-12-07), the order rotating between rounds, so a machine whose
 * load changes weighs on every system alike. Each system keeps its dev server and worker for the whole bench: the
 * worker's RSS and main-thread heap (after a GC) after each batch say whether completed runs leave memory behind.
 *
 * Measured per phase: the time the engine adds to each turn beyond the model's sleep (from the ledger: a turn
 * runs from the previous step's effect, or the start call, to its own effect), the worker's highest RSS above its idle
 * level per run of the most in flight at once, worker CPU per step, the sticky cache's hit
 * rate (the SDK's `sticky_cache_hit` / `sticky_cache_miss` counters from its Prometheus endpoint), history bytes
 * per run (`describe()` of 20 runs), failed runs and duplicate effects. Then the same load on plain Temporal
 * (`plainAgentRun`: the model and the tool as local activities, the same slot and cache sizes; the floor), and an
 * approval phase: N runs each parked on a call with `approval: 'always'` for S seconds (default 60), then
 * approved: RSS per parked run and the time from the decision to the effect.
 *
 * Where the bound is: the machine's busy cores over each phase (`/proc/stat`), split into the worker's, the
 * Temporal server's and everything else's, and how many runs in flight one core carries at the measured CPU per step.
 *
 * Printed, never asserted. The last line: `scale: N runs, engine added p50 Xms p99 Yms per turn (Z% of turn at
 * p99), RSS per run R KB, CPU/step C ms, sticky hit H%, history B KB/run, failed F, duplicates D`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LoadSampler, machineLine, rotate } from './bench-report';
import { startPeerLedger } from './peers/peer-ledger';
import {
  approvalPhase,
  directoryBytes,
  formatApprovalLine,
  loadPhase,
  startScaleSystem,
  warmUp,
  type ApprovalFigures,
  type ScaleContext,
  type ScaleSystem,
  type ScaleSystemSpec,
} from './scale-phases';
import {
  formatBound,
  formatMemoryLine,
  formatScaleLine,
  poolRounds,
  type BatchMemory,
  type ScalePhaseFigures,
} from './scale-report';

/** Defaults of a full run. */
export const SCALE_BENCH = { runs: 2_000, rounds: 3, turns: 10, parkSeconds: 60, seed: 1, rampSeconds: 10 } as const;

interface Options {
  runs: number;
  rounds: number;
  turns: number;
  parkSeconds: number;
  seed: number;
  /** A phase's runs arrive evenly over this many seconds (0: all at once). */
  rampSeconds: number;
  fastPath: boolean;
  /** Workflow task, activity and local activity slots of both workers (default: `tunedWorkerOptions()`'s). */
  slots?: number;
  /** An engine worker on this many slots beside the default one, interleaved with it (the slot A/B). */
  compareSlots?: number;
  /** An engine worker whose key store fsyncs inside its commits, on the event loop, interleaved with the default. */
  compareFsyncInCommit: boolean;
  floor: boolean;
  approvals: boolean;
}

/** The value of `--flag N` or `--flag=N`, an integer of at least `min`, else `fallback`. */
function intFlag(args: readonly string[], flag: string, min: number, fallback: number): number {
  const inline = args.find((a) => a.startsWith(`${flag}=`))?.slice(flag.length + 1);
  const at = args.indexOf(flag);
  const value = inline ?? (at >= 0 ? args[at + 1] : undefined);
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new Error(`${flag} must be an integer of at least ${min}, got "${value}".`);
  return n;
}

const hasFlag = (args: readonly string[], flag: string): boolean =>
  args.some((a) => a === flag || a.startsWith(`${flag}=`));

function optionsFromArgs(args: readonly string[]): Options {
  return {
    runs: intFlag(args, '--runs', 1, SCALE_BENCH.runs),
    rounds: intFlag(args, '--rounds', 1, SCALE_BENCH.rounds),
    turns: intFlag(args, '--turns', 1, SCALE_BENCH.turns),
    parkSeconds: intFlag(args, '--park-seconds', 0, SCALE_BENCH.parkSeconds),
    seed: intFlag(args, '--seed', 0, SCALE_BENCH.seed),
    rampSeconds: intFlag(args, '--ramp-seconds', 0, SCALE_BENCH.rampSeconds),
    fastPath: !args.includes('--regular'),
    ...(hasFlag(args, '--slots') ? { slots: intFlag(args, '--slots', 2, 0) } : {}),
    ...(hasFlag(args, '--compare-slots') ? { compareSlots: intFlag(args, '--compare-slots', 2, 0) } : {}),
    compareFsyncInCommit: args.includes('--compare-fsync-in-commit'),
    floor: !args.includes('--no-floor'),
    approvals: !args.includes('--no-approvals'),
  };
}

const log = (line: string): void => {
  process.stderr.write(`bench:scale: ${line} (load ${loadSampler.sample().toFixed(1)})\n`);
};
const loadSampler = new LoadSampler();

/** The systems of the bench, in the order of the first round. */
function systemSpecs(options: Options): ScaleSystemSpec[] {
  const slots = options.slots === undefined ? {} : { slots: options.slots };
  const specs: ScaleSystemSpec[] = [{ kind: 'engine', label: 'engine', ...slots }];
  if (options.compareSlots !== undefined)
    specs.push({ kind: 'engine', label: `engine (slots ${options.compareSlots})`, slots: options.compareSlots });
  if (options.compareFsyncInCommit)
    specs.push({ kind: 'engine', label: 'engine (fsync in commit)', fsyncInCommit: true, ...slots });
  if (options.floor) specs.push({ kind: 'plain', label: 'plain Temporal', ...slots });
  return specs;
}

/** What the rounds measured of one system. */
interface SystemRecord {
  sys: ScaleSystem;
  idleKb: number;
  rounds: ScalePhaseFigures[];
  memory: BatchMemory[];
}

/** The memory of a system's worker once a batch completed (the last workflow tasks settled first). */
async function batchMemory(sys: ScaleSystem): Promise<BatchMemory> {
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const memory = await sys.worker.memory();
  return {
    rssKb: memory.rssKb,
    heapUsedKb: memory.heapUsedKb,
    ...(sys.storeDir === undefined ? {} : { storeBytes: directoryBytes(sys.storeDir) }),
  };
}

async function main(): Promise<void> {
  const options = optionsFromArgs(process.argv.slice(2));
  const dir = mkdtempSync(join(tmpdir(), 'durable-tools-bench-scale-'));
  const ledger = await startPeerLedger();
  const ctx: ScaleContext = { ...options, rampMs: options.rampSeconds * 1000, ledger, dir, log };
  const records: SystemRecord[] = [];
  let approvals: ApprovalFigures | undefined;
  try {
    log(`options ${JSON.stringify(options)}; scratch ${dir}`);
    for (const spec of systemSpecs(options)) {
      const sys = await startScaleSystem(ctx, spec);
      records.push({ sys, idleKb: 0, rounds: [], memory: [] });
    }
    for (const record of records) {
      await warmUp(ctx, record.sys);
      record.idleKb = (await record.sys.worker.memory()).rssKb;
    }
    for (let round = 1; round <= options.rounds; round++) {
      for (const record of rotate(records, round - 1)) {
        log(`${record.sys.spec.label}, round ${round}: ${options.runs} runs of ${options.turns} turns`);
        const figures = await loadPhase(ctx, record.sys, options.runs, round, record.idleKb);
        record.rounds.push(figures);
        record.memory.push(await batchMemory(record.sys));
        log(`${record.sys.spec.label}, round ${round}: ${formatScaleLine(figures, record.sys.spec.label)}`);
        if (figures.cpu)
          log(`${record.sys.spec.label}, round ${round}: ${formatBound(figures.cpu, figures.cpuPerStepMs)}`);
      }
    }
    const engine = records[0]!;
    if (options.approvals) {
      log(`approvals: ${options.runs} runs parked ${options.parkSeconds} s`);
      approvals = await approvalPhase(ctx, engine.sys, options.runs, options.parkSeconds, engine.idleKb);
    }
    console.log(
      `${options.runs} agent runs at once on one worker (arriving over ${options.rampSeconds} s), ` +
        `${options.turns} turns each (simulated model 0.5–3 s, ` +
        `seed ${options.seed}; a tool POSTing to a ledger), fastPath: ${options.fastPath}, ` +
        `slots: ${options.slots ?? 'tunedWorkerOptions()'}, ${options.rounds} interleaved rounds`,
    );
    for (const record of records) {
      const label = record.sys.spec.label;
      for (const [i, figures] of record.rounds.entries())
        console.log(`round ${i + 1} ${formatScaleLine(figures, label).replace(/^scale: /, '')}`);
      console.log(formatMemoryLine(label, options.runs, record.idleKb, record.memory));
    }
    for (const record of records.slice(1)) {
      const line = formatScaleLine(poolRounds(record.rounds), record.sys.spec.label);
      console.log(
        record.sys.spec.kind === 'plain' ? line.replace(/^scale:/, 'floor:') : line.replace(/^scale:/, 'compare:'),
      );
    }
    if (approvals) console.log(formatApprovalLine(approvals));
    console.log(`machine: ${machineLine()}; load average during the run ${loadSampler.range()}`);
    const pooled = poolRounds(engine.rounds);
    if (pooled.cpu) console.log(formatBound(pooled.cpu, pooled.cpuPerStepMs));
    console.log(formatScaleLine(pooled));
  } finally {
    for (const record of records) await record.sys.close().catch(() => undefined);
    await ledger.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
