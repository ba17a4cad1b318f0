import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import { createSeededRandom } from '../../src/failures/seeded-random';
import type { AgentRunResult } from '../../src/contract/agent-run-types';
import type { ToolActivityInput } from '../../src/contract/tool-activity-types';
import { BusyLoops, ChaosWorkers, type ChaosWorker, type ChaosWorkerDeath } from './chaos-processes';
import { countCallPlaces, decode, type ChaosCallPlaces } from './chaos-fusion';
import { CHAOS_EFFECT_KINDS } from './chaos-tools';
import { LEDGER_SETTINGS, startLedgerServer, type LedgerEvent, type LedgerServer } from './ledger-server';

/** Shape and pacing of a chaos run. */
export const CHAOS_RUN_SETTINGS = {
  /** One progress line this often. */
  progressEveryMs: 3_000,
  /** Successful charges per run (a failing run adds one rejected charge after them). */
  chargesPerRun: { min: 2, max: 4 },
  maxChargeAmount: 1_000,
  /** Chance that a turn asks for two charges at once (run one after another). */
  twoCallTurnChance: 0.25,
  /** Every this-many-th kill waits for a refund at the ledger, so it lands while a run compensates. */
  compensationKillEvery: 3,
  /**
   * The first kill and every this-many-th after it (unless it waits for a refund) waits for a `notify` at the
   * ledger: on the fast path that call runs inside a fused step (`callModelAndTools`), so the kill lands after
   * its effect and before the step completes.
   */
  notifyKillEvery: 4,
  /** A kill waiting for a ledger event fires anyway after this long (the worker is killed at a random time). */
  triggerFallbackMs: 10_000,
  /** The same under stress, where a new worker needs minutes to start and replay before it writes anything. */
  stressTriggerFallbackMs: 90_000,
  /** A kill fires after uniform 1..spread × (mean gap) ledger writes; below 2 so the last kills still find writes. */
  killGapSpread: 1.6,
  /** Random extra wait between a kill's trigger and the SIGKILL. */
  killJitterMs: 250,
  /** Ledger delays (uniform 0..max) before recording and before answering, per effect kind. Refunds are slow. */
  ledgerDelayMaxMs: {
    charge: { before: 60, after: 200 },
    refund: { before: 300, after: 600 },
    notify: { before: 60, after: 300 },
  },
  /** All runs must end within this long after the last one started. */
  runsDeadlineMs: 10 * 60_000,
  /**
   * How long a pause lasts: longer than the chaos lease (1.5 s) plus the takeover grace (the tools' 3 s
   * timeout), so the other worker takes the key over and settles the call while the paused one sleeps.
   */
  pauseMs: { min: 5_000, max: 8_000 },
  /** Running time between two pauses. */
  pauseGapMs: { min: 300, max: 1_500 },
  /** A pause waiting for its moment (an armed point, a ledger write) gives up after this long. */
  pauseMomentTimeoutMs: 15_000,
  /**
   * The last `runs / count` runs start only after the last pause or kill, so that it still finds work; pause
   * mode also paces the others: run i starts once `i / runs` of the pauses are done, or when fewer than this
   * many runs are in flight (so a pause has work to land in).
   */
  pacedMinInFlight: 1,
  /** An armed moment moves on to the other worker when it has not come within this long. */
  armSwitchMs: 2_500,
  /**
   * Every second round through the pause moments stops a worker in a `notify` call (after its claim, just before
   * its send, just after its request left): on the fast path, inside a fused step, while the other worker takes over.
   */
  notifyPauseRounds: 2,
  /** A pause moment that did not come this many times in a row gives way to a random one. */
  pauseMissesBeforeRandom: 2,
  /** On the way out, in-flight client calls are cancelled; their promises get this long to settle. */
  clientDrainMs: 30_000,
  /** Tries to start a replacement worker (a worker can die while starting) before the run gives up. */
  replacementStartTries: 3,
} as const;

/**
 * `kill`: SIGKILL the only worker and start a new one. `pause`: two workers; SIGSTOP one for longer than the
 * lease at the moments that matter (in synchronous work after the claim, just before the effect request
 * is sent, just after it reached the ledger) and at random moments, then SIGCONT it. `stress`: busy loops
 * on every core for the whole run, plus the kills.
 */
export type ChaosMode = 'kill' | 'pause' | 'stress';

/** The moments a pause lands at, in the order they are used. */
export const CHAOS_PAUSE_MOMENTS = ['before-send', 'after-claim', 'in-activation', 'after-send', 'random'] as const;

/** One of {@link CHAOS_PAUSE_MOMENTS}. */
export type ChaosPauseAt = (typeof CHAOS_PAUSE_MOMENTS)[number];

/** Where the chaos runs: a Temporal server and the workflow bundle file the worker processes load. */
export interface ChaosTemporal {
  address: string;
  namespace: string;
  /** A file written from `bundleWorkflowCode(...).code`. */
  bundlePath: string;
}

/** Options of {@link runChaos}. */
export interface ChaosOptions {
  temporal: ChaosTemporal;
  /** Agent runs to start. */
  runs: number;
  /** At most this many runs in flight. */
  concurrency: number;
  /** `kill` (default), `pause` or `stress`: see {@link ChaosMode}. */
  mode?: ChaosMode;
  /** SIGKILLs of the worker process (each followed by a new worker); kill and stress modes. */
  kills: number;
  /** SIGSTOP/SIGCONT pauses of a worker; pause mode. */
  pauses?: number;
  /** The moments the pauses cycle through (default {@link CHAOS_PAUSE_MOMENTS}, in that order). */
  pauseMoments?: readonly ChaosPauseAt[];
  /** Fraction of runs that end with a permanently failing charge and so must compensate. */
  failFraction: number;
  seed: number;
  /** Progress lines (default `console.log`). */
  log?: (line: string) => void;
  /** Directory for the key store, the transcripts and the worker log (default: a new temp dir). */
  workDir?: string;
  /**
   * The runs' `fastPath` (docs/fast-path.md): `false` keeps them on regular activities, `true` asks for the fast
   * path; absent, the runs say nothing of it and take the default (the fast path).
   */
  fastPath?: boolean;
}

/** What {@link runChaos} found, measured at the ledger. */
export interface ChaosResult {
  runs: number;
  mode: ChaosMode;
  /** Kills actually done. */
  kills: number;
  /** Pauses actually done (a worker stopped for longer than the lease, then resumed). */
  pauses: number;
  /** Pauses by the moment they landed at. */
  pausesAt: Record<string, number>;
  /** Pauses that landed in a `notify` call (after its claim, before its send, after its request left). */
  pausesInNotify: number;
  /** Busy-loop processes that ran during the run (stress mode). */
  busyLoops: number;
  /** Kills whose trigger was a refund at the ledger (a run compensating). */
  killsDuringCompensation: number;
  /** Kills whose trigger was a `notify` at the ledger (on the fast path: inside a fused step). */
  killsDuringNotify: number;
  /**
   * Where the `notify` calls of the completed runs ran, read from their histories: inside a fused step, as their
   * own local activity, or as regular activities (undefined when the histories could not be read).
   */
  notifyCalls?: ChaosCallPlaces;
  /** Effects the ledger recorded. */
  effects: number;
  /** Unknown outcomes reconciled at the ledger after a kill: effect found (kill after it) or not (before). */
  reconciles: { found: number; notFound: number };
  /** Effects beyond the expected count for their key (0 or 1): a repeated or unwarranted side effect. */
  duplicates: number;
  /** Expected effects the ledger never saw. */
  missing: number;
  /** Final status of the runs, counted. */
  statuses: Record<string, number>;
  /** Worker processes that exited by themselves (not killed or stopped by the harness): should be 0. */
  workerDeaths: number;
  /** What each of them died of, as far as its exit and its stderr tell. */
  deaths: ChaosWorkerDeath[];
  /** Every deviation found, in words (empty when all is well). */
  problems: string[];
  durationMs: number;
  workDir: string;
}

/** One planned agent run. */
export interface RunPlan {
  index: number;
  runId: string;
  /** Amounts of the charges, in step order; the last one is rejected when `fails`. */
  amounts: number[];
  fails: boolean;
  /** A run that completes sends one `notify` (the total of its charges) in a turn of its own, its last call. */
  notifies: boolean;
  script: ScriptedTurn[];
}

/** How a planned run ended: its result, or why it has none. */
export interface RunOutcome {
  plan: RunPlan;
  result?: AgentRunResult;
  error?: string;
}

/**
 * The summary line `npm run chaos` ends with, in every mode:
 * `runs R, kills K, pauses P, effects E, duplicates D, missing M, worker deaths W`.
 */
export function formatChaosSummary(
  result: Pick<ChaosResult, 'runs' | 'kills' | 'pauses' | 'effects' | 'duplicates' | 'missing' | 'workerDeaths'>,
): string {
  return (
    `runs ${result.runs}, kills ${result.kills}, pauses ${result.pauses}, effects ${result.effects}, ` +
    `duplicates ${result.duplicates}, missing ${result.missing}, worker deaths ${result.workerDeaths}`
  );
}

/** Matches {@link formatChaosSummary}'s line; the groups are its numbers in order. */
export const CHAOS_SUMMARY_PATTERN =
  /^runs (\d+), kills (\d+), pauses (\d+), effects (\d+), duplicates (\d+), missing (\d+), worker deaths (\d+)$/;

/**
 * The crash test of the whole engine: starts a non-deduplicating ledger and a worker process, starts
 * `runs` agent runs (each several non-idempotent charges; a fraction end with a charge the ledger rejects,
 * so they abort under `failurePolicy: { criticalTools: '*' }` and compensate), and SIGKILLs the worker at
 * seeded random moments — most when the ledger has seen a random number of writes since the last restart,
 * every {@link CHAOS_RUN_SETTINGS.compensationKillEvery}-th when a refund reaches the ledger, the first and every
 * {@link CHAOS_RUN_SETTINGS.notifyKillEvery}-th when a `notify` does — starting a new worker after each kill.
 * A run that completes sends one `notify` last (irreversible, no undo: on the fast path it runs inside a fused
 * step). The key store and transcripts are files shared by all worker generations. When every run has ended it
 * checks the ledger: exactly one charge per successful step, exactly one refund under `${key}/undo` per charge
 * of a compensated run, exactly one notify per completed run and none per compensated one, nothing else; and it
 * reads the completed runs' histories for where their `notify` calls ran (`notifyCalls`).
 *
 * @example
 * ```ts
 * const result = await runChaos({ temporal, runs: 200, concurrency: 20, kills: 20, failFraction: 0.3, seed: 1 });
 * console.log(formatChaosSummary(result));
 * ```
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const started = Date.now();
  const log = options.log ?? ((line: string) => console.log(line));
  const random = createSeededRandom(options.seed);
  const ledgerRandom = createSeededRandom(options.seed ^ 0x5bd1e995);
  const workDir = options.workDir ?? mkdtempSync(join(tmpdir(), 'durable-tools-chaos-'));
  const taskQueue = `chaos-${options.seed}-${randomUUID().slice(0, 8)}`;
  const plans = planRuns(options, random, taskQueue);
  const ledger = await startChaosLedger(CHAOS_RUN_SETTINGS.ledgerDelayMaxMs, ledgerRandom);
  const mode = options.mode ?? 'kill';
  const pauseTarget = mode === 'pause' ? (options.pauses ?? 0) : 0;
  const killTarget = mode === 'pause' ? 0 : options.kills;
  const target = { ...options.temporal, taskQueue, ledgerUrl: ledger.url, workDir };
  const workers = new ChaosWorkers(target, log, mode === 'pause');
  const busyLoops = mode === 'stress' ? new BusyLoops() : undefined;
  if (busyLoops) log(`chaos: ${busyLoops.count} busy-loop processes saturate every core for the whole run`);
  const connection = await Connection.connect({ address: options.temporal.address });
  const client = new Client({ connection, namespace: options.temporal.namespace });
  // Every client call of a run goes through the run's signal: on the way out they are cancelled, so none
  // is left retrying against a closed connection (the client's retry timer would then throw "Channel has
  // been shut down" from a timer, where nothing can catch it).
  const calls = new ClientCalls(connection);
  const outcomes: RunOutcome[] = [];
  let startedRuns = 0;
  const pausing = { pauses: 0, at: {} as Record<string, number>, inNotify: 0, done: pauseTarget === 0 };
  let kills = 0;
  let killsDone = killTarget === 0;
  let killsDuringCompensation = 0;
  let killsDuringNotify = 0;
  let notifyCalls: ChaosCallPlaces | undefined;
  let allEnded = false;
  const phaseProblems: string[] = [];
  const progress = setInterval(() => {
    const statuses = countStatuses(outcomes);
    log(
      `chaos: ${startedRuns}/${plans.length} started, ${outcomes.length} ended (${formatCounts(statuses)}), ` +
        `${startedRuns - outcomes.length} in flight, kills ${kills}/${killTarget}, pauses ${pausing.pauses}/${pauseTarget}, ` +
        `worker deaths ${workers.deaths.length}, ledger effects ${ledger.effects.length}`,
    );
  }, CHAOS_RUN_SETTINGS.progressEveryMs);
  progress.unref();
  /** Starts a worker in place of one that died; a worker may die while starting too, so it tries again. */
  const replaceWorker = async (why: string): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      log(`chaos: ${why}; starting a new one`);
      try {
        await workers.start();
        return;
      } catch (error) {
        if (attempt >= CHAOS_RUN_SETTINGS.replacementStartTries) throw error;
        why = `a new worker failed to start (${error instanceof Error ? error.message : String(error)})`;
      }
    }
  };

  try {
    await workers.start();
    if (mode === 'pause') await workers.start(); // the one that takes over while the other is stopped
    const concurrency = Math.max(1, Math.min(options.concurrency, plans.length));
    // The last runs wait until every pause (pause mode) or kill (kill, stress) is done or nothing is in
    // flight, so that the last ones still find work. Pause mode also paces the others: run `index` waits
    // until its share of the pauses is done; the kills are spread over the writes of the others.
    const reserved = plans.length - Math.ceil(plans.length / Math.max(1, mode === 'pause' ? pauseTarget : killTarget));
    const mayStart = (index: number): boolean =>
      mode === 'pause'
        ? pausing.done ||
          (index < reserved &&
            (pausing.pauses >= Math.floor((index * pauseTarget) / plans.length) ||
              startedRuns - outcomes.length < CHAOS_RUN_SETTINGS.pacedMinInFlight))
        : killsDone || index < reserved || startedRuns - outcomes.length < CHAOS_RUN_SETTINGS.pacedMinInFlight;
    const runAll = async (): Promise<void> => {
      let next = 0;
      const slot = async (): Promise<void> => {
        while (next < plans.length && !calls.closing) {
          if (!mayStart(next)) {
            await sleep(50);
            continue;
          }
          const plan = plans[next++]!;
          startedRuns += 1;
          outcomes.push(await calls.run(() => runOne(client, plan, taskQueue, options.fastPath)));
        }
      };
      await Promise.all(Array.from({ length: concurrency }, slot));
      allEnded = true;
    };
    // The writes the kills are spread over: those of the runs that start before the last kill.
    const expectedWrites = plans
      .slice(0, reserved)
      .reduce((sum, p) => sum + p.amounts.length + (p.fails ? p.amounts.length - 1 : 0) + (p.notifies ? 1 : 0), 0);
    const killAll = async (): Promise<void> => {
      try {
        await killUntilTarget();
      } finally {
        killsDone = true;
      }
    };
    const killUntilTarget = async (): Promise<void> => {
      while (kills < killTarget && !allEnded) {
        const duringCompensation = (kills + 1) % CHAOS_RUN_SETTINGS.compensationKillEvery === 0;
        const duringNotify = !duringCompensation && kills % CHAOS_RUN_SETTINGS.notifyKillEvery === 0;
        // Spread the kills over the writes still to come: the mean gap is a share of what is left.
        const remainingWrites = Math.max(0, expectedWrites - ledger.effects.length);
        const meanGap = remainingWrites / (killTarget - kills + 1);
        const trigger = await waitForKillMoment(ledger, {
          gap: 1 + Math.floor(random() * CHAOS_RUN_SETTINGS.killGapSpread * meanGap),
          phase: random() < 0.5 ? 'received' : 'recorded',
          kindOnly: duringCompensation
            ? CHAOS_EFFECT_KINDS.refund
            : duringNotify
              ? CHAOS_EFFECT_KINDS.notify
              : undefined,
          stop: () => allEnded,
          workerDied: workers.died,
          fallbackMs:
            mode === 'stress' ? CHAOS_RUN_SETTINGS.stressTriggerFallbackMs : CHAOS_RUN_SETTINGS.triggerFallbackMs,
        });
        if (trigger === 'stopped') break;
        if (trigger === 'worker-died') {
          if (workers.live.length === 0) await replaceWorker('the worker exited by itself');
          continue;
        }
        await sleep(Math.floor(random() * CHAOS_RUN_SETTINGS.killJitterMs));
        if (allEnded) break;
        await workers.kill();
        kills += 1;
        if (trigger.startsWith('recorded refund') || trigger.startsWith('received refund'))
          killsDuringCompensation += 1;
        if (trigger.startsWith('recorded notify') || trigger.startsWith('received notify')) killsDuringNotify += 1;
        log(`chaos: kill ${kills}/${killTarget} at "${trigger}"; starting worker generation ${workers.generation + 1}`);
        await replaceWorker('a worker was killed');
      }
    };
    const pauseAll = async (): Promise<void> => {
      const moments = options.pauseMoments?.length ? options.pauseMoments : CHAOS_PAUSE_MOMENTS;
      const notifyRounds = CHAOS_RUN_SETTINGS.notifyPauseRounds;
      let misses = 0;
      let missedOn: ChaosWorker | undefined;
      try {
        while (pausing.pauses < pauseTarget && !allEnded) {
          while (workers.live.length < 2 && !allEnded)
            await replaceWorker('fewer than two workers are live (a takeover needs two)');
          // A moment that does not come (too little in flight for it) gives way to a random one.
          const moment: ChaosPauseAt =
            misses >= CHAOS_RUN_SETTINGS.pauseMissesBeforeRandom ? 'random' : moments[pausing.pauses % moments.length]!;
          // After a miss, the other worker (the moment may not come on one that holds no runs).
          const others = workers.live.filter((worker) => worker !== missedOn);
          const candidates = others.length > 0 ? others : workers.live;
          const victim = candidates[Math.floor(random() * candidates.length)];
          if (!victim) continue;
          const round = Math.floor(pausing.pauses / moments.length);
          const inNotify =
            moment !== 'random' && moment !== 'in-activation' && round % notifyRounds === notifyRounds - 1;
          const tool = inNotify ? CHAOS_EFFECT_KINDS.notify : undefined;
          const landed = await pauseAt(workers, victim, { moment, tool }, ledger, random, () => allEnded);
          if (!landed) {
            misses += 1;
            missedOn = victim;
            continue;
          }
          missedOn = undefined;
          const stoppedNames = landed.victims.map((w) => `generation ${w.generation}`).join(' and ');
          misses = 0;
          pausing.pauses += 1;
          pausing.at[moment] = (pausing.at[moment] ?? 0) + 1;
          if (tool) pausing.inNotify += 1;
          const { min, max } = CHAOS_RUN_SETTINGS.pauseMs;
          const pauseMs = min + Math.floor(random() * (max - min));
          log(
            `chaos: pause ${pausing.pauses}/${pauseTarget}: worker ${stoppedNames} stopped ` +
              `${landed.where} for ${pauseMs} ms`,
          );
          await sleep(pauseMs);
          for (const stopped of landed.victims) workers.resume(stopped);
          const gap = CHAOS_RUN_SETTINGS.pauseGapMs;
          await sleep(gap.min + Math.floor(random() * (gap.max - gap.min)));
        }
      } finally {
        pausing.done = true;
      }
      // A worker that dies after the last pause is replaced too: the takeover needs two. (Pause mode only: kill
      // and stress modes keep one worker, which each kill replaces.)
      while (mode === 'pause' && !allEnded) {
        if (workers.live.length < 2) await replaceWorker('fewer than two workers are live (a takeover needs two)');
        await sleep(200);
      }
    };
    // A phase that fails (the runs past their deadline, no worker could be started) ends the others: the
    // runs still in flight are cancelled, and what the ledger saw is still counted and reported.
    const failed = (error: unknown): void => {
      phaseProblems.push(`The harness failed: ${describeError(error)}`);
      allEnded = true;
      void calls.cancelAll(CHAOS_RUN_SETTINGS.clientDrainMs);
    };
    const runPhase = withDeadline(runAll(), CHAOS_RUN_SETTINGS.runsDeadlineMs + options.runs * 5_000).finally(() => {
      allEnded = true;
    });
    await Promise.all([runPhase, killAll(), pauseAll()].map((phase) => phase.catch(failed)));
    // Where the notify calls ran (fused or not), while the connection is open.
    const completed = outcomes.filter((o) => o.result?.status === 'completed').map((o) => o.plan.runId);
    notifyCalls = await countCallPlaces(client, completed, CHAOS_EFFECT_KINDS.notify).catch((error: unknown) => {
      phaseProblems.push(`Could not read the histories: ${describeError(error)}`);
      return undefined;
    });
  } catch (error) {
    phaseProblems.push(`The harness failed: ${describeError(error)}`);
  } finally {
    allEnded = true;
    clearInterval(progress);
    // In order: no new runs, cancel the client calls still in flight and let them settle, then the workers,
    // and only then close the connection (no call is left to retry on it) and the ledger.
    await calls.cancelAll(CHAOS_RUN_SETTINGS.clientDrainMs);
    await workers.stop();
    await busyLoops?.stop();
    await connection.close();
    await ledger.close();
  }

  const checked = checkLedger(plans, outcomes, ledger);
  checked.problems.push(...phaseProblems);
  if (kills < killTarget) checked.problems.push(`Only ${kills} of ${killTarget} kills happened before all runs ended.`);
  if (pausing.pauses < pauseTarget) {
    checked.problems.push(`Only ${pausing.pauses} of ${pauseTarget} pauses happened before all runs ended.`);
  }
  for (const death of workers.deaths) {
    checked.problems.push(
      `Worker generation ${death.generation} (pid ${death.pid}) exited by itself (code ${death.code}, ` +
        `signal ${death.signal})${death.cause ? `: ${death.cause}` : ''}`,
    );
  }
  return {
    runs: plans.length,
    mode,
    pauses: pausing.pauses,
    pausesAt: pausing.at,
    pausesInNotify: pausing.inNotify,
    busyLoops: busyLoops?.count ?? 0,
    kills,
    killsDuringCompensation,
    killsDuringNotify,
    ...(notifyCalls ? { notifyCalls } : {}),
    effects: ledger.effects.length,
    reconciles: { ...ledger.reconciles },
    ...checked,
    workerDeaths: workers.deaths.length,
    deaths: [...workers.deaths],
    statuses: countStatuses(outcomes),
    durationMs: Date.now() - started,
    workDir,
  };
}

/** Options of {@link runCompensationKill}. */
export interface CompensationKillOptions {
  temporal: ChaosTemporal;
  log?: (line: string) => void;
  workDir?: string;
}

/** What {@link runCompensationKill} saw. */
export interface CompensationKillResult {
  result: AgentRunResult;
  /** Where each kill landed, and how many refunds the ledger had recorded at that moment. */
  kills: Array<{ moment: string; refundsRecorded: number }>;
  /** Effects under each key of the run, by kind. */
  effectsByKey: Record<string, Record<string, number>>;
  /** Unknown outcomes reconciled at the ledger after a kill. */
  reconciles: { found: number; notFound: number };
}

/**
 * One run that charges three times, then fails permanently and compensates; the worker is SIGKILLed three
 * times while it compensates, each time in another window: (1) the refund of step 3 has reached the ledger
 * but is not yet recorded, (2) the refund of step 2 is recorded but not yet answered, (3) step 1 is
 * compensating: the run's history shows its refund scheduled and not ended (the refund may not have started).
 * A new worker starts after each kill. Each kill waits until its step is seen compensating in the history.
 */
export async function runCompensationKill(options: CompensationKillOptions): Promise<CompensationKillResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const workDir = options.workDir ?? mkdtempSync(join(tmpdir(), 'durable-tools-chaos-compensation-'));
  const taskQueue = `chaos-compensation-${randomUUID().slice(0, 8)}`;
  // Slow refunds: 700 ms before recording and 700 ms before answering (the tools' timeout is 3 s).
  const ledger = await startLedgerServer({ delayMs: ({ kind }) => (kind === CHAOS_EFFECT_KINDS.refund ? 700 : 0) });
  const workers = new ChaosWorkers({ ...options.temporal, taskQueue, ledgerUrl: ledger.url, workDir }, log);
  const connection = await Connection.connect({ address: options.temporal.address });
  const client = new Client({ connection, namespace: options.temporal.namespace });
  const runId = `chaos-compensation-${randomUUID().slice(0, 8)}`;
  const kills: CompensationKillResult['kills'] = [];
  try {
    await workers.start();
    // Keys carry the run's first run id, unknown before it starts: `${runId}/<first run id>/<step>/undo`.
    const isUndoKey = (key: string, step: number) => key.startsWith(`${runId}/`) && key.endsWith(`/${step}/undo`);
    // Listen before the run starts, so no ledger event can pass unseen.
    const step3Received = nextLedgerEvent(ledger, (e) => e.phase === 'received' && isUndoKey(e.key, 3));
    const step2Recorded = nextLedgerEvent(ledger, (e) => e.phase === 'recorded' && isUndoKey(e.key, 2));
    for (const pending of [step3Received, step2Recorded]) pending.catch(() => undefined);
    const amounts = [10, 20, 30, LEDGER_SETTINGS.maxAmount + 1];
    const handle = await startAgentRun(
      client,
      {
        goal: 'charge three times, then fail and compensate',
        model: { provider: 'scripted', script: scriptFor(amounts.map((amount) => [amount])) },
        failurePolicy: { criticalTools: '*' },
      },
      { taskQueue, runId },
    );
    const stepCompensating = (stepId: number): Promise<void> => waitForCompensation(client, runId, stepId);
    const killWhen = async (label: string, event?: Promise<LedgerEvent>): Promise<void> => {
      if (event) await event;
      await workers.kill();
      const refundsRecorded = ledger.effects.filter((e) => e.kind === CHAOS_EFFECT_KINDS.refund).length;
      kills.push({ moment: label, refundsRecorded });
      log(`compensation kill ${kills.length}: ${label} (refunds recorded so far: ${refundsRecorded})`);
      await workers.start();
    };
    await stepCompensating(3);
    await killWhen('refund of step 3 received, not yet recorded', step3Received);
    await stepCompensating(2);
    await killWhen('refund of step 2 recorded, not yet answered', step2Recorded);
    await stepCompensating(1);
    await killWhen('step 1 compensating (its refund scheduled, not ended)');
    const result = await waitForAgentRun(handle);
    const effectsByKey: Record<string, Record<string, number>> = {};
    for (const effect of ledger.effects) {
      const byKind = (effectsByKey[effect.key] ??= {});
      byKind[effect.kind] = (byKind[effect.kind] ?? 0) + 1;
    }
    return { result, kills, effectsByKey, reconciles: { ...ledger.reconciles } };
  } finally {
    await workers.stop();
    await connection.close();
    await ledger.close();
  }
}

/**
 * Plans `options.runs` agent runs on `taskQueue`: 2–4 charges each in turns of one or two calls; a `failFraction` of
 * them end with a charge the ledger rejects (they compensate), the others send one `notify` last.
 */
export function planRuns(
  options: Pick<ChaosOptions, 'runs' | 'failFraction'>,
  random: () => number,
  taskQueue: string,
): RunPlan[] {
  const { min, max } = CHAOS_RUN_SETTINGS.chargesPerRun;
  return Array.from({ length: options.runs }, (_, index) => {
    const charges = min + Math.floor(random() * (max - min + 1));
    const amounts = Array.from(
      { length: charges },
      () => 1 + Math.floor(random() * CHAOS_RUN_SETTINGS.maxChargeAmount),
    );
    const fails = random() < options.failFraction;
    if (fails) amounts.push(LEDGER_SETTINGS.maxAmount + 1 + index);
    // Group the charges into turns of one or two calls.
    const turns: number[][] = [];
    for (let i = 0; i < amounts.length;) {
      const size = i + 1 < amounts.length && random() < CHAOS_RUN_SETTINGS.twoCallTurnChance ? 2 : 1;
      turns.push(amounts.slice(i, i + size));
      i += size;
    }
    // A run that completes sends its receipt last, in a turn of its own (on the fast path a fused step runs it);
    // a run that compensates sends none (an irreversible effect is not undone).
    const notify = fails ? undefined : { account: 'acct-1', total: amounts.reduce((sum, a) => sum + a, 0) };
    return {
      index,
      runId: `${taskQueue}-run-${index}`,
      amounts,
      fails,
      notifies: !fails,
      script: scriptFor(turns, notify),
    };
  });
}

function scriptFor(turns: number[][], notify?: { account: string; total: number }): ScriptedTurn[] {
  return [
    ...turns.map((amounts) => ({
      toolCalls: amounts.map((amount, i) => ({ name: 'charge', arguments: { account: `acct-${i + 1}`, amount } })),
    })),
    ...(notify ? [{ toolCalls: [{ name: CHAOS_EFFECT_KINDS.notify, arguments: notify }] }] : []),
    { text: 'All charges made.', final: true },
  ];
}

/** Starts one planned run and waits for its result (an error in words when it has none). */
export async function runOne(
  client: Client,
  plan: RunPlan,
  taskQueue: string,
  fastPath: boolean | undefined,
): Promise<RunOutcome> {
  let handle: WorkflowHandle;
  try {
    handle = await startAgentRun(
      client,
      {
        goal: `chaos run ${plan.index}`,
        model: { provider: 'scripted', script: plan.script },
        failurePolicy: { criticalTools: '*' },
        ...(fastPath !== undefined ? { fastPath } : {}),
      },
      { taskQueue, runId: plan.runId },
    );
  } catch (error) {
    return { plan, error: `could not start: ${String(error)}` };
  }
  try {
    return { plan, result: await waitForAgentRun(handle) };
  } catch (error) {
    return { plan, error: `ended with an error: ${String(error)}` };
  }
}

/**
 * Checks the ledger against the plans: per charge step exactly one charge when it should succeed (none for
 * the rejected one), per successful charge of a failing run exactly one refund under `${key}/undo`, and under
 * the step after the charges exactly one notify for a run that completes, none for one that compensates.
 */
export function checkLedger(
  plans: readonly RunPlan[],
  outcomes: readonly RunOutcome[],
  ledger: LedgerServer,
): { duplicates: number; missing: number; problems: string[] } {
  const counts = new Map<string, number>();
  for (const effect of ledger.effects) {
    const id = `${effect.kind} ${effect.key}`;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  const problems: string[] = [];
  let duplicates = 0;
  let missing = 0;
  const expect = (kind: string, key: string, expected: number): void => {
    const id = `${kind} ${key}`;
    const seen = counts.get(id) ?? 0;
    counts.delete(id);
    if (seen > expected) {
      duplicates += seen - expected;
      problems.push(`${seen} "${kind}" effects under ${key}, expected ${expected}`);
    } else if (seen < expected) {
      missing += expected - seen;
      problems.push(`no "${kind}" effect under ${key}`);
    }
  };
  for (const plan of plans) {
    // Every key of a run starts with its run key (workflow id and first run id).
    const runKey = outcomes.find((outcome) => outcome.plan === plan)?.result?.runKey ?? plan.runId;
    plan.amounts.forEach((_, i) => {
      const key = `${runKey}/${i + 1}`;
      const rejected = plan.fails && i === plan.amounts.length - 1;
      expect(CHAOS_EFFECT_KINDS.charge, key, rejected ? 0 : 1);
      expect(CHAOS_EFFECT_KINDS.refund, `${key}/undo`, plan.fails && !rejected ? 1 : 0);
    });
    // The receipt is the step after the charges: once for a run that completes, never for one that compensates.
    const notifyKey = `${runKey}/${plan.amounts.length + 1}`;
    expect(CHAOS_EFFECT_KINDS.notify, notifyKey, plan.notifies ? 1 : 0);
  }
  for (const [id, seen] of counts) {
    duplicates += seen;
    problems.push(`${seen} unexpected effect(s): ${id}`);
  }
  for (const { plan, result, error } of outcomes) {
    const want = plan.fails ? 'compensated' : 'completed';
    if (error) problems.push(`${plan.runId}: ${error}`);
    else if (result?.status !== want) {
      problems.push(`${plan.runId}: status ${result?.status}, expected ${want} (${result?.reason ?? 'no reason'})`);
    } else {
      const badSteps = result.steps.filter((step, i) => {
        const rejected = plan.fails && i === plan.amounts.length - 1;
        const wantStep = rejected ? 'failed' : plan.fails ? 'compensated' : 'succeeded';
        const wantTool = i < plan.amounts.length ? CHAOS_EFFECT_KINDS.charge : CHAOS_EFFECT_KINDS.notify;
        return step.status !== wantStep || step.tool !== wantTool;
      });
      if (result.steps.length !== plan.amounts.length + (plan.notifies ? 1 : 0) || badSteps.length > 0) {
        problems.push(`${plan.runId}: steps ${result.steps.map((s) => `${s.stepId}:${s.status}`).join(', ')}`);
      }
    }
  }
  if (outcomes.length !== plans.length) problems.push(`${plans.length - outcomes.length} runs never ended`);
  return { duplicates, missing, problems };
}

/**
 * Stops a worker at `moment`: armed inside one worker at a time, `worker` first (it stops itself in
 * synchronous work after a claim, just before the request is built, or while its workflow thread runs an
 * activation), `worker` when the ledger receives a write it sent (the request just left), or `worker` at a
 * random time; with a `tool`, only in a call of that tool (not for `in-activation` and `random`). Resolves with
 * where it landed and the workers it stopped, or undefined when the moment did not come in time (or every run
 * ended).
 */
async function pauseAt(
  workers: ChaosWorkers,
  worker: ChaosWorker,
  { moment, tool }: { moment: ChaosPauseAt; tool: string | undefined },
  ledger: LedgerServer,
  random: () => number,
  ended: () => boolean,
): Promise<{ where: string; victims: ChaosWorker[] } | undefined> {
  const deadline = Date.now() + CHAOS_RUN_SETTINGS.pauseMomentTimeoutMs;
  if (moment === 'random') {
    await sleep(Math.floor(random() * 1_500));
    if (ended() || !workers.pause(worker)) return undefined;
    return { where: 'at a random moment', victims: [worker] };
  }
  if (moment === 'after-send') {
    const event = await new Promise<LedgerEvent | undefined>((resolveEvent) => {
      const timer = setInterval(() => {
        if (ended() || Date.now() > deadline) done(undefined);
      }, 50);
      const off = ledger.onEvent((e) => {
        // Synchronously, while the write is still at the ledger.
        if (e.phase !== 'received' || e.workerPid !== worker.pid || (tool !== undefined && e.kind !== tool)) return;
        done(workers.pause(worker) ? e : undefined);
      });
      function done(e: LedgerEvent | undefined): void {
        clearInterval(timer);
        off();
        resolveEvent(e);
      }
    });
    return event
      ? { where: `just after its ${event.kind} request for ${event.key} left`, victims: [worker] }
      : undefined;
  }
  // Armed in one worker at a time, `worker` first, then the next live one every armSwitchMs: a worker that
  // holds no runs never reaches the moment, and arming all at once would stop several (no takeover).
  const candidates = [worker, ...workers.live.filter((w) => w !== worker)];
  const stoppedOnes = (): ChaosWorker[] => candidates.filter((w) => workers.isStopped(w));
  let stopped: ChaosWorker[] = [];
  for (let turn = 0; stopped.length === 0 && !ended() && Date.now() <= deadline; turn++) {
    const armed = candidates[turn % candidates.length]!;
    workers.arm(armed, moment, tool);
    const switchAt = Date.now() + CHAOS_RUN_SETTINGS.armSwitchMs;
    while (stopped.length === 0 && !ended() && Date.now() <= Math.min(switchAt, deadline)) {
      await sleep(10);
      stopped = stoppedOnes();
    }
    workers.arm(armed, null);
  }
  // One may have stopped between the last look and the disarm.
  stopped = stoppedOnes();
  if (stopped.length === 0) return undefined;
  const where = {
    'before-send': 'in synchronous work just before sending',
    'after-claim': 'in synchronous work after a claim',
    'in-activation': 'while its workflow thread ran an activation',
  }[moment];
  return { where: tool ? `${where} (in a ${tool} call)` : where, victims: stopped };
}

/** Resolves with a description of the moment to kill, `stopped` when all runs ended, or `worker-died`. */
function waitForKillMoment(
  ledger: LedgerServer,
  options: {
    gap: number;
    phase: LedgerEvent['phase'];
    /** Only a write of this kind triggers (the gap is ignored). */
    kindOnly: string | undefined;
    stop: () => boolean;
    workerDied: () => Promise<void>;
    fallbackMs: number;
  },
): Promise<string> {
  return new Promise((resolveMoment) => {
    let seen = 0;
    let settled = false;
    const done = (moment: string): void => {
      if (settled) return;
      settled = true;
      off();
      clearTimeout(fallback);
      clearInterval(stopPoll);
      resolveMoment(moment);
    };
    const off = ledger.onEvent((event) => {
      if (event.phase !== options.phase) return;
      if (options.kindOnly !== undefined ? event.kind === options.kindOnly : ++seen >= options.gap) {
        done(`${event.phase} ${event.kind} ${event.key}`);
      }
    });
    const fallback = setTimeout(() => done('random time (no trigger event)'), options.fallbackMs);
    const stopPoll = setInterval(() => options.stop() && done('stopped'), 100);
    void options.workerDied().then(() => done('worker-died'));
  });
}

function nextLedgerEvent(
  ledger: LedgerServer,
  match: (event: LedgerEvent) => boolean,
  timeoutMs = 120_000,
): Promise<LedgerEvent> {
  return new Promise((resolveEvent, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`The expected ledger event did not come within ${timeoutMs} ms.`));
    }, timeoutMs);
    timer.unref();
    const off = ledger.onEvent((event) => {
      if (!match(event)) return;
      off();
      clearTimeout(timer);
      resolveEvent(event);
    });
  });
}

/**
 * Waits until step `stepId` of the run is compensating: its compensation scheduled and not ended, as the run's
 * history on the server shows it. Not by the run's state query: a worker answers that, and the first query after
 * the run's worker was killed goes to the dead worker's sticky queue, where the server waits the sticky
 * schedule-to-start timeout (3 s for the chaos worker) before it asks another worker; a compensation that the
 * next worker resumes at once (dead-holder takeover, sticky queue reset) can begin and end within that wait.
 * Fails at once when the compensation already ended.
 */
async function waitForCompensation(client: Client, runId: string, stepId: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const progress = await compensationProgress(client, runId, stepId).catch(() => undefined);
    if (progress === 'scheduled') return;
    if (progress === 'ended') {
      throw new Error(`Run ${runId}: the compensation of step ${stepId} ended before it was seen running.`);
    }
    if (Date.now() >= deadline) {
      throw new Error(`Run ${runId}: step ${stepId} was not seen compensating within ${timeoutMs} ms.`);
    }
    await sleep(25);
  }
}

/**
 * Where the compensation of `stepId` stands in the run's history: `scheduled` from the scheduling of its activity
 * until the history records how that ended, `ended` after that.
 */
async function compensationProgress(
  client: Client,
  workflowId: string,
  stepId: number,
): Promise<'not scheduled' | 'scheduled' | 'ended'> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const open = new Set<string>();
  let ended = false;
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const input = decode<Partial<ToolActivityInput>>(scheduled.input?.payloads?.[0]);
      if (input?.stepId === stepId && input.compensationOf !== undefined) open.add(String(event.eventId));
      continue;
    }
    const end =
      event.activityTaskCompletedEventAttributes ??
      event.activityTaskFailedEventAttributes ??
      event.activityTaskTimedOutEventAttributes ??
      event.activityTaskCanceledEventAttributes;
    if (end && open.delete(String(end.scheduledEventId))) ended = true;
  }
  return open.size > 0 ? 'scheduled' : ended ? 'ended' : 'not scheduled';
}

/** Ledger delays, uniform 0..max ms, before recording and before answering, per effect kind. */
export type ChaosLedgerDelays = Record<'charge' | 'refund' | 'notify', { before: number; after: number }>;

/** The downstream ledger of a chaos run: each request waits a random part of its kind's maximum delay. */
export function startChaosLedger(delays: ChaosLedgerDelays, random: () => number): Promise<LedgerServer> {
  return startLedgerServer({
    delayMs: ({ kind, phase }) => {
      const max =
        kind === CHAOS_EFFECT_KINDS.refund
          ? delays.refund
          : kind === CHAOS_EFFECT_KINDS.notify
            ? delays.notify
            : delays.charge;
      return Math.floor(random() * max[phase]);
    },
  });
}

/** `work`, or a rejection once `deadlineMs` has passed without it settling. */
export async function withDeadline(work: Promise<void>, deadlineMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`The chaos runs did not end within ${deadlineMs} ms.`)), deadlineMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** How many runs ended in each status (`error` where the harness could not learn it). */
export function countStatuses(outcomes: readonly RunOutcome[]): Record<string, number> {
  const statuses: Record<string, number> = {};
  for (const { result, error } of outcomes) {
    const status = error ? 'error' : (result?.status ?? 'unknown');
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
  return statuses;
}

function formatCounts(counts: Record<string, number>): string {
  const parts = Object.entries(counts).map(([name, n]) => `${n} ${name}`);
  return parts.length > 0 ? parts.join(', ') : 'none';
}

/**
 * The client calls of the runs, each under its own abort signal, so that the harness can cancel every one
 * still in flight and wait for them before it closes the connection.
 */
class ClientCalls {
  closing = false;
  private readonly running = new Map<Promise<unknown>, AbortController>();

  constructor(private readonly connection: Connection) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    const controller = new AbortController();
    // The client adds one abort listener per call (a run long-polls for its result many times).
    setMaxListeners(0, controller.signal);
    const call = this.connection.withAbortSignal(controller.signal, fn);
    this.running.set(call, controller);
    try {
      return await call;
    } finally {
      this.running.delete(call);
    }
  }

  /** Cancels every call in flight and waits up to `graceMs` for them to settle. */
  async cancelAll(graceMs: number): Promise<void> {
    this.closing = true;
    const pending = [...this.running];
    for (const [, controller] of pending) controller.abort();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(pending.map(([call]) => call)),
      new Promise<void>((resolveLate) => {
        timer = setTimeout(resolveLate, graceMs);
      }),
    ]);
    clearTimeout(timer);
  }
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolveSleep) => setTimeout(resolveSleep, ms));
}
