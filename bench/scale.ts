/**
 * `npm run bench:scale [-- --runs N] [-- --turns T] [-- --park-seconds S] [-- --seed K] [-- --regular]
 * [-- --slots N] [-- --no-floor] [-- --no-approvals]`: the engine where agents live. N agent runs at once (default 2,000) on one
 * worker process, each of T turns (default 10) of a simulated model whose latency is drawn from 0.5–3 s (seeded,
 * bench/scale-model.ts) followed by a tool with effects (a POST to a local ledger under the call's key; the
 * ledger counts duplicates), then a final answer. The runs take the fast path (`fastPath: true`, set explicitly;
 * `--regular`: `fastPath: false`).
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
 * Printed, never asserted. The last line: `scale: N runs, engine added p50 Xms p99 Yms per turn (Z% of turn at
 * p99), RSS per run R KB, CPU/step C ms, sticky hit H%, history B KB/run, failed F, duplicates D`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LoadSampler, machineLine } from './bench-report';
import { startPeerLedger } from './peers/peer-ledger';
import {
  approvalPhase,
  formatApprovalLine,
  loadPhase,
  startScaleSystem,
  type ApprovalFigures,
  type ScaleContext,
} from './scale-phases';
import { formatScaleLine, type ScalePhaseFigures } from './scale-report';

/** Defaults of a full run. */
export const SCALE_BENCH = { runs: 2_000, turns: 10, parkSeconds: 60, seed: 1 } as const;

interface Options {
  runs: number;
  turns: number;
  parkSeconds: number;
  seed: number;
  fastPath: boolean;
  /** Workflow task, activity and local activity slots of both workers (default: `tunedWorkerOptions()`'s). */
  slots?: number;
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

function optionsFromArgs(args: readonly string[]): Options {
  return {
    runs: intFlag(args, '--runs', 1, SCALE_BENCH.runs),
    turns: intFlag(args, '--turns', 1, SCALE_BENCH.turns),
    parkSeconds: intFlag(args, '--park-seconds', 0, SCALE_BENCH.parkSeconds),
    seed: intFlag(args, '--seed', 0, SCALE_BENCH.seed),
    fastPath: !args.includes('--regular'),
    ...(args.some((a) => a.startsWith('--slots')) ? { slots: intFlag(args, '--slots', 2, 0) } : {}),
    floor: !args.includes('--no-floor'),
    approvals: !args.includes('--no-approvals'),
  };
}

const log = (line: string): void => {
  process.stderr.write(`bench:scale: ${line} (load ${loadSampler.sample().toFixed(1)})\n`);
};
const loadSampler = new LoadSampler();

async function engineAndApprovals(
  ctx: ScaleContext,
  options: Options,
): Promise<{ engine: ScalePhaseFigures; approvals?: ApprovalFigures }> {
  const sys = await startScaleSystem(ctx, 'engine');
  try {
    log(`engine (fastPath: ${options.fastPath}): ${options.runs} runs of ${options.turns} turns`);
    const engine = await loadPhase(ctx, sys, 'engine', options.runs);
    log(formatScaleLine(engine));
    if (!options.approvals) return { engine };
    log(`approvals: ${options.runs} runs parked ${options.parkSeconds} s`);
    return { engine, approvals: await approvalPhase(ctx, sys, options.runs, options.parkSeconds) };
  } finally {
    await sys.close();
  }
}

async function floorPhase(ctx: ScaleContext, options: Options): Promise<ScalePhaseFigures> {
  const sys = await startScaleSystem(ctx, 'plain');
  try {
    log(`plain Temporal floor: ${options.runs} runs of ${options.turns} turns`);
    return await loadPhase(ctx, sys, 'plain', options.runs);
  } finally {
    await sys.close();
  }
}

async function main(): Promise<void> {
  const options = optionsFromArgs(process.argv.slice(2));
  const dir = mkdtempSync(join(tmpdir(), 'durable-tools-bench-scale-'));
  const ledger = await startPeerLedger();
  const ctx: ScaleContext = { ...options, ledger, dir, log };
  try {
    log(`options ${JSON.stringify(options)}; scratch ${dir}`);
    const { engine, approvals } = await engineAndApprovals(ctx, options);
    const floor = options.floor ? await floorPhase(ctx, options) : undefined;
    console.log(
      `${options.runs} agent runs at once on one worker, ${options.turns} turns each (simulated model 0.5–3 s, ` +
        `seed ${options.seed}; a tool POSTing to a ledger), fastPath: ${options.fastPath}, ` +
        `slots: ${options.slots ?? 'tunedWorkerOptions()'}`,
    );
    if (floor) console.log(formatScaleLine(floor, 'plain Temporal').replace(/^scale:/, 'floor:'));
    if (approvals) console.log(formatApprovalLine(approvals));
    console.log(`machine: ${machineLine()}; load average during the run ${loadSampler.range()}`);
    console.log(formatScaleLine(engine));
  } finally {
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
