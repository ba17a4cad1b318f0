/**
 * The phases of `npm run bench:scale` (see bench/scale.ts): a load phase (N agent runs of `turns` turns at once,
 * on the engine or on the plain Temporal floor) and the approval phase (N runs parked on an approval, then
 * decided). Each system has a dev server and a worker process of its own for the whole bench, so the load phases
 * of its rounds run on the same worker (its memory after each batch tells whether completed runs leave anything).
 */
import { Client, Connection } from '@temporalio/client';
import { appendFileSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { getPendingApprovals, approveStep, type PendingApproval } from '../src/client/approval-client';
import { startAgentRun, waitForAgentRun } from '../src/client/agent-run-client';
import { retryTransientReads } from '../src/client/transient-read-retry';
import type { AgentRunInput } from '../src/contract/agent-run-types';
import { startDevServer } from '../src/dev-server/dev-server';
import { percentile } from './peers/peers-report';
import type { PeerLedger } from './peers/peer-ledger';
import { ledgerRunInput } from './peers/durable-tools-service';
import {
  prometheusCounter,
  formatSticky,
  stickyBetween,
  turnTimes,
  type ScalePhaseFigures,
  type StickyCounts,
  type TurnTime,
} from './scale-report';
import { driveRuns, failureReasons, pool, type RunDriver, type RunTrack } from './scale-runs';
import { busyCoresBetween, readMachineCpu } from './scale-machine-cpu';
import { processCpuMs } from './peers/peer-systems';
import { simulatedModelMs } from './scale-model';
import { startScaleWorker, type ScaleWorkerProcess } from './scale-worker-process';

/** What every phase shares. */
export interface ScaleContext {
  ledger: PeerLedger;
  seed: number;
  turns: number;
  /** `fastPath` of the engine's runs, set explicitly whatever the engine's default. */
  fastPath: boolean;
  /** The runs of a load or approval phase arrive evenly over this long, ms (0: all at once). */
  rampMs: number;
  dir: string;
  log(line: string): void;
}

/** One system of the bench: the engine (with its slot counts) or the plain Temporal floor. */
export interface ScaleSystemSpec {
  kind: 'engine' | 'plain';
  /** Its name in the report: `engine`, `plain Temporal`, `engine (slots 40)`. */
  label: string;
  /** Workflow task, activity and local activity slots (default: `tunedWorkerOptions()`'s). */
  slots?: number;
  /** The engine's key store syncs inside its commits, on the event loop (`--compare-fsync-in-commit`). */
  fsyncInCommit?: boolean;
}

/** A dev server, a client on it and a worker process of one system. */
export interface ScaleSystem {
  spec: ScaleSystemSpec;
  client: Client;
  worker: ScaleWorkerProcess;
  /** The dev server's process id (its CPU is the server's share of a step). */
  serverPid: number;
  taskQueue: string;
  /** Where the engine's durable stores are (`.data/` of its working directory); undefined for the floor. */
  storeDir?: string;
  close(): Promise<void>;
}

let metricsPortBase = 19_400 + (process.pid % 500) * 2;

/** Starts a fresh tuned dev server and a worker process of `spec` on it. */
export async function startScaleSystem(ctx: ScaleContext, spec: ScaleSystemSpec): Promise<ScaleSystem> {
  const server = await startDevServer({ ui: false });
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, namespace: server.namespace });
  const taskQueue = `scale-${spec.kind}`;
  metricsPortBase += 1;
  // Each engine worker keeps its stores in a directory of its own, so their growth is its own.
  const dir = spec.kind === 'engine' ? mkdirOwn(ctx.dir, `engine-${metricsPortBase}`) : ctx.dir;
  const worker = await startScaleWorker({
    system: spec.kind,
    address: server.address,
    namespace: server.namespace,
    taskQueue,
    ledgerUrl: ctx.ledger.url,
    seed: ctx.seed,
    metricsPort: metricsPortBase,
    dir,
    ...(spec.slots === undefined ? {} : { slots: spec.slots }),
    ...(spec.fsyncInCommit ? { fsyncInCommit: true } : {}),
  });
  return {
    spec,
    client,
    worker,
    serverPid: server.pid,
    taskQueue,
    ...(spec.kind === 'engine' ? { storeDir: join(dir, '.data') } : {}),
    async close() {
      await worker.stop();
      await connection.close();
      await server.stop();
    },
  };
}

/** The engine's run input: `turns` calls of `tool`, one per turn of the simulated model, then a final answer. */
function engineInput(ctx: ScaleContext, id: string, turns: number, tool: string): AgentRunInput {
  const input = ledgerRunInput(id, turns, { fastPath: ctx.fastPath }, 'simulated');
  const model = input.model as unknown as { script: Array<{ toolCalls: Array<{ name: string }> }> };
  for (const turn of model.script) for (const call of turn.toolCalls) call.name = tool;
  return input;
}

/** How the runs of `system` start and end. */
export function runDriver(ctx: ScaleContext, sys: ScaleSystem, system: 'engine' | 'plain'): RunDriver {
  const turns = ctx.turns;
  if (system === 'plain') {
    return {
      steps: turns,
      async start(id) {
        const handle = await sys.client.workflow.start('plainAgentRun', {
          taskQueue: sys.taskQueue,
          workflowId: id,
          args: [id, turns, 'local'],
        });
        // The floor's client reads its results with the engine's retry of transient read failures, so that both
        // count runs, not reads (a server shedding load fails long polls while the runs go on).
        return async () => {
          const steps = await retryTransientReads(() => handle.result());
          return steps === turns || `${String(steps)} steps`;
        };
      },
    };
  }
  return {
    steps: turns,
    async start(id) {
      const handle = await startAgentRun(sys.client, engineInput(ctx, id, turns, 'ledger_step'), {
        taskQueue: sys.taskQueue,
        workflowId: id,
      });
      return async () => {
        const result = await waitForAgentRun(handle);
        if (result.status === 'completed' && result.stepCount === turns) return true;
        return `${result.status} after ${result.stepCount} steps: ${result.reason ?? 'no reason'}`;
      };
    },
  };
}

function mkdirOwn(parent: string, name: string): string {
  const dir = join(parent, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Bytes of the files under `dir` (0 when it does not exist). */
export function directoryBytes(dir: string): number {
  let total = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? directoryBytes(path) : statSync(path).size;
  }
  return total;
}

/** Mean history size (bytes) of up to 20 of `ids`, from `describe()`. */
async function historyBytes(client: Client, ids: readonly string[]): Promise<number> {
  const sample = ids.slice(0, 20);
  let total = 0;
  for (const id of sample) total += (await client.workflow.getHandle(id).describe()).historySize ?? Number.NaN;
  return total / sample.length;
}

/** The sticky cache's counters so far (the SDK's). */
async function stickyCounts(worker: ScaleWorkerProcess): Promise<StickyCounts> {
  const text = await worker.metrics();
  return {
    hit: prometheusCounter(text, 'temporal_sticky_cache_hit'),
    miss: prometheusCounter(text, 'temporal_sticky_cache_miss'),
    evicted: prometheusCounter(text, 'temporal_sticky_cache_total_forced_eviction'),
  };
}

/** A few unrecorded runs, so the first measured batch does not pay the worker's first workflow tasks. */
export async function warmUp(ctx: ScaleContext, sys: ScaleSystem): Promise<void> {
  const driver = runDriver(ctx, sys, sys.spec.kind);
  await driveRuns(ids(`w${sys.spec.kind[0]}`, 5), driver, ctx.ledger, {
    worker: sys.worker,
    log: ctx.log,
    label: `${sys.spec.label} warm-up`,
  });
}

/**
 * Runs `n` runs of `sys` at once and measures them (see bench/scale.ts); `round` names the runs. `idleKb`: the
 * worker's RSS when idle after its warm-up, the base of RSS per run in flight (default: its RSS as the phase starts,
 * which after an earlier batch still holds that batch's garbage).
 */
export async function loadPhase(
  ctx: ScaleContext,
  sys: ScaleSystem,
  n: number,
  round = 1,
  idleKb?: number,
): Promise<ScalePhaseFigures> {
  const system = sys.spec.kind;
  const driver = runDriver(ctx, sys, system);
  const label = `${sys.spec.label}, round ${round}`;
  const watch = { worker: sys.worker, log: ctx.log, label };
  const baselineKb = idleKb ?? sys.worker.rssKb();
  const sticky0 = await stickyCounts(sys.worker);
  const threads0 = sys.worker.threadCpuMs();
  const [cpu0, server0, machine0, t0] = [
    sys.worker.cpuMs(),
    processCpuMs(sys.serverPid),
    readMachineCpu(),
    performance.now(),
  ];
  const runIds = ids(`${sys.spec.label.replace(/\W+/g, '')}${round}`, n);
  const { tracks, peak } = await driveRuns(runIds, driver, ctx.ledger, watch, ctx.rampMs);
  const [cpu1, server1, machine1, t1] = [
    sys.worker.cpuMs(),
    processCpuMs(sys.serverPid),
    readMachineCpu(),
    performance.now(),
  ];
  const threads1 = sys.worker.threadCpuMs();
  const sticky = stickyBetween(sticky0, await stickyCounts(sys.worker));
  ctx.log(
    `${label}: peak ${peak.inFlight} runs in flight, RSS at most ${(peak.rssKb / 1024).toFixed(0)} MB (before ` +
      `${(baselineKb / 1024).toFixed(0)} MB), after ${(sys.worker.rssKb() / 1024).toFixed(0)} MB; ` +
      `sticky cache ${JSON.stringify(sticky)}`,
  );
  const tracked = [...tracks.values()];
  for (const line of failureReasons(tracked)) ctx.log(`failed run: ${line}`);
  // SCALE_TURNS_FILE=<path>: every run's turns (wall and added ms, in order), one JSON line per run, to look into.
  const dump = process.env.SCALE_TURNS_FILE;
  if (dump)
    for (const t of tracked)
      appendFileSync(
        dump,
        `${JSON.stringify({ id: t.id, startMs: (t.acceptedAt ?? NaN) - t.startedAt, turns: turnsOf(ctx, t) })}\n`,
      );
  const turns = tracked.flatMap((t) => turnsOf(ctx, t));
  const steps = n * ctx.turns;
  const wallMs = t1 - t0;
  return {
    runs: n,
    turns,
    rssPerRunKb: peak.inFlight > 0 ? (peak.rssKb - baselineKb) / peak.inFlight : Number.NaN,
    cpuPerStepMs: (cpu1 - cpu0) / steps,
    sticky,
    historyKbPerRun: (await historyBytes(sys.client, runIds)) / 1024,
    failed: tracked.filter((t) => t.ok !== true).length,
    duplicates: tracked.reduce((sum, t) => sum + t.duplicates, 0),
    cpu: {
      cores: cpus().length,
      busyCores: busyCoresBetween(machine0, machine1),
      workerCores: (cpu1 - cpu0) / wallMs,
      serverCores: (server1 - server0) / wallMs,
      serverCpuPerStepMs: (server1 - server0) / steps,
      peakInFlight: peak.inFlight,
      meanTurnMs:
        turns.length > 0 ? turns.reduce((sum, t) => sum + t.wallMs - t.addedMs, 0) / turns.length : Number.NaN,
      mainThreadCores: (threads1.main - threads0.main) / wallMs,
      threadsPerStepMs: {
        main: (threads1.main - threads0.main) / steps,
        core: (threads1.core - threads0.core) / steps,
        other: (threads1.other - threads0.other) / steps,
      },
    },
  };
}

function turnsOf(ctx: ScaleContext, track: RunTrack): TurnTime[] {
  return turnTimes(track, (turn) => simulatedModelMs(ctx.seed, track.id, turn));
}

/** Run ids of a phase: `scale-<phase>-<i>` (the index picks the simulated latencies: same on both systems). */
function ids(phase: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `scale-${phase}-${i}`);
}

/** What the approval phase measured. */
export interface ApprovalFigures {
  runs: number;
  parkedSeconds: number;
  rssPerParkedRunKb: number;
  /** From the approve call to the tool's effect, ms. */
  decisionToEffectMs: number[];
  sticky: StickyCounts;
  failed: number;
  duplicates: number;
}

/** Waits until every run of `runIds` has a pending approval; returns them. */
async function awaitParked(
  ctx: ScaleContext,
  sys: ScaleSystem,
  runIds: readonly string[],
): Promise<Map<string, PendingApproval>> {
  const parked = new Map<string, PendingApproval>();
  while (parked.size < runIds.length) {
    await pool(
      runIds.filter((id) => !parked.has(id)),
      20,
      async (id) => {
        const [pending] = await getPendingApprovals(sys.client, id).catch(() => []);
        if (pending) parked.set(id, pending);
      },
    );
    ctx.log(`approvals: ${parked.size}/${runIds.length} runs parked on an approval`);
    if (parked.size < runIds.length) await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
  return parked;
}

/**
 * N runs parked on an approval for `parkSeconds`, then approved (see bench/scale.ts). `idleKb`: the worker's idle RSS,
 * the base of RSS per parked run (default: its RSS as the phase starts).
 */
export async function approvalPhase(
  ctx: ScaleContext,
  sys: ScaleSystem,
  n: number,
  parkSeconds: number,
  idleKb?: number,
): Promise<ApprovalFigures> {
  const runIds = ids('a', n);
  const baselineKb = idleKb ?? sys.worker.rssKb();
  const driver: RunDriver = {
    steps: 1,
    async start(id) {
      const handle = await startAgentRun(sys.client, engineInput(ctx, id, 1, 'ledger_approved'), {
        taskQueue: sys.taskQueue,
        workflowId: id,
      });
      return async () => {
        const result = await waitForAgentRun(handle);
        return result.status === 'completed' || `${result.status}: ${result.reason ?? 'no reason'}`;
      };
    },
  };
  const decidedAt = new Map<string, number>();
  let rssPerParkedRunKb = Number.NaN;
  let sticky0: StickyCounts = { hit: 0, miss: 0, evicted: 0 };
  const decide = async (): Promise<void> => {
    const parked = await awaitParked(ctx, sys, runIds);
    const since = performance.now();
    sticky0 = await stickyCounts(sys.worker);
    ctx.log(`approvals: all ${n} parked; waiting ${parkSeconds} s`);
    await new Promise((resolve) => setTimeout(resolve, parkSeconds * 1000));
    // After a GC of the main thread: what the load rounds before left there is not counted against the parked runs.
    rssPerParkedRunKb = ((await sys.worker.memory()).rssKb - baselineKb) / n;
    ctx.log(`approvals: parked ${((performance.now() - since) / 1000).toFixed(0)} s, deciding`);
    await pool(runIds, 20, async (id) => {
      const pending = parked.get(id)!;
      decidedAt.set(id, performance.now());
      await approveStep(sys.client, id, { stepId: pending.stepId, digest: pending.digest, approver: 'bench:scale' });
    });
  };
  const [{ tracks }] = await Promise.all([
    driveRuns(runIds, driver, ctx.ledger, { worker: sys.worker, log: ctx.log, label: 'approvals' }, ctx.rampMs),
    decide(),
  ]);
  const sticky = stickyBetween(sticky0, await stickyCounts(sys.worker));
  const tracked = [...tracks.values()];
  for (const line of failureReasons(tracked)) ctx.log(`failed run: ${line}`);
  return {
    runs: n,
    parkedSeconds: parkSeconds,
    rssPerParkedRunKb,
    decisionToEffectMs: tracked
      .filter((t) => t.effectsAt[0] !== undefined)
      .map((t) => t.effectsAt[0]! - decidedAt.get(t.id)!),
    sticky,
    failed: tracked.filter((t) => t.ok !== true).length,
    duplicates: tracked.reduce((sum, t) => sum + t.duplicates, 0),
  };
}

/** The approval phase's line. */
export function formatApprovalLine(a: ApprovalFigures): string {
  const f = (v: number) => (Number.isFinite(v) ? v.toFixed(0) : '?');
  return (
    `approvals: ${a.runs} runs parked ${a.parkedSeconds} s, RSS per parked run ${f(a.rssPerParkedRunKb)} KB, ` +
    `decision to effect p50 ${f(percentile(a.decisionToEffectMs, 50))} ms p99 ${f(percentile(a.decisionToEffectMs, 99))} ms, ` +
    `sticky hit ${formatSticky(a.sticky)}, failed ${a.failed}, duplicates ${a.duplicates}`
  );
}
