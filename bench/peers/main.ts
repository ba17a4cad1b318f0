/**
 * `npm run bench:peers [-- --quick] [-- --rounds N] [-- --warm-up N] [-- --runs N]`: durable-tools against Restate, DBOS and plain
 * Temporal (local activities; regular activities) on one workload,
 * in interleaved rounds in one run. A run is `steps` (10) sequential durable steps, each a call that POSTs to a
 * local ledger under a per-step idempotency key; the ledger counts effects per key. Every system's service
 * (worker + the client that starts the runs) runs in its own child process, so its CPU is its own; the
 * servers' CPU is read from /proc (Temporal dev server, restate-server, the Postgres backends of DBOS's database).
 *
 * After one unrecorded warm-up round per system (the same work, so every system is measured warm), per round
 * and system (the order rotates): ms per step of sequential single runs, steps/s with `concurrency`
 * runs at once, and the worker and server CPU per step of that throughput phase. Then one crash round per
 * system: `crashRuns` runs at once, the service process SIGKILLed when the ledger has seen each of the
 * `killAt` effect counts (the same for every system), started again, all runs awaited; it counts duplicate
 * keys (more than one effect) and missing steps (no effect), and the time from each kill until the
 * interrupted run records its next step (time to recover).
 *
 * Printed, never asserted. The last line:
 * `peers: latency xA of restate, xB of dbos, xC of temporal; throughput xD of restate, xE of dbos, xF of temporal;
 * duplicates D/R/B`, durable-tools against the best variant of each peer (lowest ms/step, highest steps/s;
 * duplicates: the most any variant had); `temporal` is plain Temporal with local activities.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LoadSampler, machineLine, median, rotate } from '../bench-report';
import { startPeerLedger, type PeerLedger } from './peer-ledger';
import {
  formatMedianPeersLine,
  formatPeersLine,
  percentile,
  tallyLedger,
  type LedgerTally,
  type PeersSummary,
} from './peers-report';
import {
  cpuBetween,
  dbosSystem,
  durableToolsSystem,
  restateSystem,
  temporalSystem,
  type PeerBenchContext,
  type PeerFamily,
  type PeerSystem,
} from './peer-systems';
import { ServiceKilledError, startService, type ServiceProcess } from './service-process';

/** Sizes of a full run and of `--quick`. */
export const PEERS_BENCH = {
  full: { warmUpRounds: 4, rounds: 3, latencyRuns: 5, concurrency: 20, crashRuns: 20, killAt: [30, 90, 150] },
  quick: { warmUpRounds: 0, rounds: 1, latencyRuns: 1, concurrency: 4, crashRuns: 4, killAt: [12] },
  steps: 10,
} as const;

interface Sizes {
  /** Rounds run first and not recorded, so that every system is measured warm, as a long-running service. */
  warmUpRounds: number;
  rounds: number;
  latencyRuns: number;
  concurrency: number;
  crashRuns: number;
  killAt: readonly number[];
}

interface Measured {
  system: PeerSystem;
  service: ServiceProcess;
  msPerStep: number[];
  stepsPerSecond: number[];
  workerCpuPerStep: number[];
  serverCpuPerStep: number[];
  crash?: CrashResult;
}

interface CrashResult extends LedgerTally {
  kills: number;
  seconds: number;
  recoverMs: number[];
  restartMs: number[];
}

function sizesFromArgs(args: readonly string[]): Sizes {
  const base: Sizes = args.includes('--quick') ? { ...PEERS_BENCH.quick } : { ...PEERS_BENCH.full };
  const rounds = countFlag(args, '--rounds', 1);
  if (rounds !== undefined) base.rounds = rounds;
  const warmUp = countFlag(args, '--warm-up', 0);
  if (warmUp !== undefined) base.warmUpRounds = warmUp;
  return base;
}

/** The value of `--flag N` or `--flag=N`, an integer of at least `min`; undefined when the flag is absent. */
function countFlag(args: readonly string[], flag: string, min: number): number | undefined {
  const inline = args.find((a) => a.startsWith(`${flag}=`))?.slice(flag.length + 1);
  const at = args.indexOf(flag);
  const value = inline ?? (at >= 0 ? args[at + 1] : undefined);
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new Error(`${flag} must be an integer of at least ${min}, got "${value}".`);
  return n;
}

const log = (line: string): void => {
  process.stderr.write(`bench:peers: ${line}\n`);
};

let runCounter = 0;
function newRunId(system: PeerSystem): string {
  runCounter += 1;
  return `${system.family}-${runCounter}-${randomUUID().slice(0, 8)}`;
}

async function startFor(system: PeerSystem): Promise<ServiceProcess> {
  const service = await startService(system.spec);
  await system.afterStart?.(service);
  return service;
}

async function measureLatency(m: Measured, sizes: Sizes): Promise<void> {
  const t0 = performance.now();
  for (let i = 0; i < sizes.latencyRuns; i++) await m.service.run(newRunId(m.system)).done;
  m.msPerStep.push((performance.now() - t0) / (sizes.latencyRuns * PEERS_BENCH.steps));
}

async function measureThroughput(m: Measured, sizes: Sizes): Promise<void> {
  const [worker0, server0] = [await m.service.cpuMs(), await m.system.serverCpuMs()];
  const t0 = performance.now();
  await Promise.all(Array.from({ length: sizes.concurrency }, () => m.service.run(newRunId(m.system)).done));
  const seconds = (performance.now() - t0) / 1000;
  const [worker1, server1] = [await m.service.cpuMs(), await m.system.serverCpuMs()];
  const steps = sizes.concurrency * PEERS_BENCH.steps;
  m.stepsPerSecond.push(steps / seconds);
  m.workerCpuPerStep.push((worker1 - worker0) / steps);
  m.serverCpuPerStep.push(cpuBetween(server0, server1) / steps);
}

/**
 * A round of one system that is not recorded: the same runs as a measured round, so that its code is compiled
 * and its caches filled before the measured rounds (JIT warm-up went on for several rounds without it).
 */
async function warmUpRound(m: Measured, sizes: Sizes): Promise<void> {
  const unrecorded: Measured = { ...m, msPerStep: [], stepsPerSecond: [], workerCpuPerStep: [], serverCpuPerStep: [] };
  await measureLatency(unrecorded, sizes);
  await measureThroughput(unrecorded, sizes);
}

/** The crash round of one system (see the file's comment). */
async function crashRound(m: Measured, sizes: Sizes, ledger: PeerLedger): Promise<CrashResult> {
  const runIds = Array.from({ length: sizes.crashRuns }, () => newRunId(m.system));
  const started = new Set<string>();
  const done = new Set<string>();
  const base = ledger.total();
  const recoverMs: number[] = [];
  const restartMs: number[] = [];
  let nextKill = 0;
  let up = true;
  /** Runs interrupted by a kill: run id → the key whose effect triggered it, when, and which kill (0-based). */
  const interrupted = new Map<string, { key: string; at: number; kill: number }>();
  let unsubscribe = (): void => undefined;
  const allDone = new Promise<void>((resolve) => {
    const finished = (runId: string): void => {
      done.add(runId);
      recovered(runId);
      if (done.size === runIds.length) resolve();
    };
    const watch = (runId: string, work: Promise<void>): void => {
      work.then(
        () => finished(runId),
        (error: unknown) => {
          if (!(error instanceof ServiceKilledError)) log(`${m.system.name}: ${String(error)}`);
        },
      );
    };
    const recovered = (runId: string): void => {
      const hit = interrupted.get(runId);
      if (!hit) return;
      interrupted.delete(runId);
      // In kill order (a run interrupted by the first kill may go on after the run of the second).
      recoverMs[hit.kill] = performance.now() - hit.at;
    };
    const restart = async (): Promise<void> => {
      const t0 = performance.now();
      m.service = await startFor(m.system);
      restartMs.push(performance.now() - t0);
      for (const runId of runIds) {
        if (done.has(runId)) continue;
        if (started.has(runId)) watch(runId, m.service.attach(runId));
        else launch(runId);
      }
      up = true;
    };
    const launch = (runId: string): void => {
      const { started: accepted, done: finishedRun } = m.service.run(runId);
      accepted.then(
        () => started.add(runId),
        () => undefined,
      );
      watch(runId, finishedRun);
    };
    unsubscribe = ledger.onEffect((key, total) => {
      const runId = key.slice(0, key.indexOf('/'));
      if (!runIds.includes(runId)) return;
      const hit = interrupted.get(runId);
      if (hit && hit.key !== key) recovered(runId);
      if (!up || nextKill >= sizes.killAt.length || total - base < sizes.killAt[nextKill]!) return;
      // Synchronously, before the ledger answers: the effect is recorded, its caller never hears of it.
      m.service.kill();
      up = false;
      nextKill += 1;
      interrupted.set(runId, { key, at: performance.now(), kill: nextKill - 1 });
      log(`${m.system.name}: SIGKILL at effect ${total - base}, restarting`);
      restart().catch((error: unknown) => log(`${m.system.name}: restart failed: ${String(error)}`));
    }) as () => void;
    for (const runId of runIds) launch(runId);
  });
  const t0 = performance.now();
  const progress = setInterval(
    () =>
      log(`${m.system.name}: crash round, ${done.size}/${runIds.length} runs done, ${ledger.total() - base} effects`),
    10_000,
  );
  await allDone;
  clearInterval(progress);
  unsubscribe();
  return {
    ...tallyLedger(ledger.counts, runIds, PEERS_BENCH.steps),
    kills: nextKill,
    seconds: (performance.now() - t0) / 1000,
    recoverMs: recoverMs.filter(() => true), // no holes (a kill whose run never went on)
    restartMs,
  };
}

function best(measured: Measured[], family: PeerFamily, pick: (m: Measured) => number, lowest: boolean): number {
  const values = measured.filter((m) => m.system.family === family).map(pick);
  return lowest ? Math.min(...values) : Math.max(...values);
}

/** Prints the run's report and returns the figures of its last line. */
function report(measured: Measured[], sizes: Sizes, load: LoadSampler): PeersSummary {
  const f = (v: number, digits = 1) => (Number.isFinite(v) ? v.toFixed(digits) : '?');
  const rounds = (values: number[], digits = 1) => values.map((v) => f(v, digits)).join(', ');
  console.log(
    `${PEERS_BENCH.steps} sequential durable steps per run (each a POST to a local ledger under a per-step key); ` +
      `${sizes.rounds} interleaved round(s) after ${sizes.warmUpRounds} unrecorded warm-up round(s); medians ` +
      '(per-round values in brackets)',
  );
  for (const m of measured) {
    console.log(
      `${m.system.name.padEnd(34)} ${f(median(m.msPerStep)).padStart(6)} ms/step [${rounds(m.msPerStep)}]  ` +
        `${f(median(m.stepsPerSecond)).padStart(6)} steps/s at ${sizes.concurrency} runs [${rounds(m.stepsPerSecond)}]  ` +
        `worker CPU ${f(median(m.workerCpuPerStep), 2)} ms/step, ${m.system.serverLabel} CPU ${f(median(m.serverCpuPerStep), 2)} ms/step`,
    );
  }
  for (const m of measured) {
    const c = m.crash;
    if (!c) continue;
    console.log(
      `${m.system.name.padEnd(34)} crash: ${sizes.crashRuns} runs, ${c.kills} SIGKILLs at effects ${sizes.killAt.join('/')}: ` +
        `${c.effects} effects, ${c.duplicates} duplicate keys, ${c.missing} missing, ${f(c.seconds)} s; ` +
        `recovery ${rounds(c.recoverMs.map((v) => v / 1000))} s (p95 ${f(percentile(c.recoverMs, 95) / 1000)} s), ` +
        `restart ${rounds(c.restartMs.map((v) => v / 1000))} s`,
    );
  }
  console.log(`machine: ${machineLine()}; load average during the rounds ${load.range()}`);
  const dup = (family: PeerFamily) =>
    Math.max(...measured.filter((m) => m.system.family === family).map((m) => m.crash?.duplicates ?? Number.NaN));
  const summary: PeersSummary = {
    msPerStep: {
      ours: best(measured, 'durable-tools', (m) => median(m.msPerStep), true),
      restate: best(measured, 'restate', (m) => median(m.msPerStep), true),
      dbos: best(measured, 'dbos', (m) => median(m.msPerStep), true),
      temporal: best(measured, 'temporal', (m) => median(m.msPerStep), true),
    },
    stepsPerSecond: {
      ours: best(measured, 'durable-tools', (m) => median(m.stepsPerSecond), false),
      restate: best(measured, 'restate', (m) => median(m.stepsPerSecond), false),
      dbos: best(measured, 'dbos', (m) => median(m.stepsPerSecond), false),
      temporal: best(measured, 'temporal', (m) => median(m.stepsPerSecond), false),
    },
    duplicates: { ours: dup('durable-tools'), restate: dup('restate'), dbos: dup('dbos') },
  };
  console.log(formatPeersLine(summary));
  return summary;
}

/**
 * One full run: every system started afresh (its own servers and scratch directory), warmed up, measured in
 * interleaved rounds, crashed, stopped; prints its report and returns its last line's figures.
 */
async function fullRun(sizes: Sizes): Promise<PeersSummary> {
  const dir = mkdtempSync(join(tmpdir(), 'durable-tools-bench-peers-'));
  const ledger = await startPeerLedger();
  const ctx: PeerBenchContext = {
    ledgerUrl: ledger.url,
    steps: PEERS_BENCH.steps,
    dir,
    postgresUrl: process.env.DURABLE_TOOLS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    output: process.env.PEERS_SERVICE_OUTPUT === 'inherit' ? 'inherit' : 'ignore',
  };
  const systems: PeerSystem[] = [];
  const measured: Measured[] = [];
  const load = new LoadSampler();
  try {
    log(`sizes ${JSON.stringify(sizes)}; scratch ${dir}`);
    // The engine's variants, each with `fastPath` set explicitly (whatever the default): regular activities, and
    // the fast path (docs/fast-path.md) with chained turns and fused steps (its default), with fused steps but one
    // turn per step, and without fused steps.
    const regular = 'durable-tools regular activities';
    const unfused = 'durable-tools fast path unfused';
    const unchained = 'durable-tools fast path unchained';
    const ungrouped = 'durable-tools fast path without group commit';
    const polled = 'durable-tools fast path without eager start';
    const unsynced = 'durable-tools fast path without fsync';
    const inCommit = 'durable-tools fast path with fsync in commit';
    const named: Array<[string, () => Promise<PeerSystem>]> = [
      [regular, () => durableToolsSystem(ctx, { name: regular, runInput: { fastPath: false } })],
      [
        'durable-tools fast path',
        () => durableToolsSystem(ctx, { name: 'durable-tools fast path', runInput: { fastPath: true } }),
      ],
      [unchained, () => durableToolsSystem(ctx, { name: unchained, runInput: { fastPath: { chainedTurns: false } } })],
      [unfused, () => durableToolsSystem(ctx, { name: unfused, runInput: { fastPath: { fusedSteps: false } } })],
      [
        ungrouped,
        () =>
          durableToolsSystem(ctx, { name: ungrouped, runInput: { fastPath: true }, service: { groupCommit: false } }),
      ],
      [
        polled,
        () => durableToolsSystem(ctx, { name: polled, runInput: { fastPath: true }, service: { eagerStart: false } }),
      ],
      [
        unsynced,
        () =>
          durableToolsSystem(ctx, { name: unsynced, runInput: { fastPath: true }, service: { synchronous: 'NORMAL' } }),
      ],
      [
        inCommit,
        () =>
          durableToolsSystem(ctx, {
            name: inCommit,
            runInput: { fastPath: true },
            service: { syncOffEventLoop: false },
          }),
      ],
      ['restate', () => restateSystem(ctx, false)],
      ['restate (wal fsync off)', () => restateSystem(ctx, true)],
      ['dbos', () => dbosSystem(ctx, false)],
      ['dbos (synchronous_commit off)', () => dbosSystem(ctx, true)],
      ['temporal local activities', () => temporalSystem(ctx, 'local')],
      ['temporal regular activities', () => temporalSystem(ctx, 'regular')],
    ];
    // PEERS_ONLY="durable-tools fast path,restate": only the systems named (comma-separated). Default: all but
    // the engine's ablations (unchained, unfused, without group commit, without eager start, without fsync), which say what each part of the fast path
    // brings when named.
    const only = process.env.PEERS_ONLY?.split(',')
      .map((name) => name.trim())
      .filter(Boolean);
    const ablations = new Set([unchained, unfused, ungrouped, polled, unsynced, inCommit]);
    const makers = named
      .filter(([name]) => (only ? only.includes(name) : !ablations.has(name)))
      .map(([, make]) => make);
    for (const make of makers) {
      const system = await make();
      systems.push(system);
      const t0 = performance.now();
      const service = await startFor(system);
      log(`${system.name}: up (service start ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
      measured.push({ system, service, msPerStep: [], stepsPerSecond: [], workerCpuPerStep: [], serverCpuPerStep: [] });
      await service.run(newRunId(system)).done; // warm-up
    }
    for (let round = 0; round < sizes.warmUpRounds; round++) {
      for (const m of rotate(measured, round)) {
        await warmUpRound(m, sizes);
        log(`warm-up round ${round + 1}/${sizes.warmUpRounds} ${m.system.name} (not recorded)`);
      }
    }
    for (let round = 0; round < sizes.rounds; round++) {
      for (const m of rotate(measured, round)) {
        await measureLatency(m, sizes);
        await measureThroughput(m, sizes);
        log(
          `round ${round + 1}/${sizes.rounds} ${m.system.name}: ${m.msPerStep.at(-1)!.toFixed(1)} ms/step, ` +
            `${m.stepsPerSecond.at(-1)!.toFixed(1)} steps/s (load ${load.sample().toFixed(1)})`,
        );
      }
    }
    // PEERS_CRASH_ROUND=0 leaves the crash rounds out (e.g. to profile the service processes with
    // PEERS_SERVICE_NODE_ARGS=--cpu-prof: a killed process writes no profile); its line then shows `?`.
    for (const m of process.env.PEERS_CRASH_ROUND === '0' ? [] : measured) {
      log(`${m.system.name}: crash round`);
      m.crash = await crashRound(m, sizes, ledger);
      load.sample();
    }
  } finally {
    await Promise.allSettled(measured.map((m) => m.service.stop()));
    await Promise.allSettled(systems.map((s) => s.close()));
    await ledger.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return report(measured, sizes, load);
}

/**
 * `--runs N` (default 1) full runs one after the other; with more than one, a last line of the median of each
 * ratio over the runs (the judged figure: one run's ratios move more than most changes do).
 */
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const sizes = sizesFromArgs(args);
  const runs = countFlag(args, '--runs', 1) ?? 1;
  const summaries: PeersSummary[] = [];
  for (let i = 0; i < runs; i++) {
    if (runs > 1) log(`full run ${i + 1}/${runs}`);
    summaries.push(await fullRun(sizes));
  }
  if (runs > 1) console.log(formatMedianPeersLine(summaries));
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
