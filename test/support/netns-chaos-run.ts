import { Client, Connection } from '@temporalio/client';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { createSeededRandom } from '../../src/failures/seeded-random';
import {
  checkLedger,
  countStatuses,
  planRuns,
  runOne,
  startChaosLedger,
  withDeadline,
  type RunOutcome,
} from './chaos-run';
import type { LedgerEvent, LedgerServer } from './ledger-server';
import type { NetnsHost, NetnsNetwork } from './netns-network';
import { startTcpRelay, type TcpRelay } from './netns-relay';
import { NetnsWorkers, type HostWorker } from './netns-workers';

/**
 * What goes wrong, once per event: `kill-host` SIGKILLs every process of a worker host while one of its tool calls
 * is at the downstream, then restarts the host; `partition` cuts a worker host off from the Temporal frontend (not
 * from PostgreSQL or the downstream) while one of its tool calls is at the downstream, then heals; `restart-history`
 * restarts the Temporal server's history service; `restart-postgres` restarts PostgreSQL (the key store's, and the
 * Temporal cluster's own store).
 */
export type ClusterChaosMode = 'kill-host' | 'partition' | 'restart-history' | 'restart-postgres';

/** Every {@link ClusterChaosMode}, in the order `npm run chaos -- --topology cluster` runs them. */
export const CLUSTER_CHAOS_MODES: readonly ClusterChaosMode[] = [
  'kill-host',
  'partition',
  'restart-history',
  'restart-postgres',
];

/** Pacing of a cluster chaos run. */
export const CLUSTER_CHAOS_SETTINGS = {
  progressEveryMs: 5_000,
  /** Ledger delays (uniform 0..max ms) before recording and before answering, per effect kind. */
  ledgerDelayMaxMs: {
    charge: { before: 100, after: 400 },
    refund: { before: 300, after: 600 },
    notify: { before: 100, after: 400 },
  },
  /**
   * How long a partition lasts: beyond the tools' 3 s start-to-close timeout (the server retries the call on the
   * other host, which finds the key held) and well beyond the 1.5 s lease (the partitioned holder can still renew it
   * in PostgreSQL, which it still reaches).
   */
  partitionMs: { min: 5_000, max: 9_000 },
  /** A killed host comes back after this long (a reboot). */
  hostRebootMs: { min: 500, max: 2_000 },
  /** Time between the end of one event and the wait for the next. */
  eventGapMs: { min: 1_000, max: 3_000 },
  /** An event waits for a ledger write from a live host; after this long it happens anyway. */
  triggerFallbackMs: 20_000,
  /** All runs must end within this long, plus 5 s per run. */
  runsDeadlineMs: 10 * 60_000,
} as const;

/** Where the Temporal server is and what can be done to it. */
export interface ClusterChaosTemporal {
  /** `host:port` of the frontend as the worker hosts reach it (the network's `temporalHost`). */
  hostAddress: string;
  /** `host:port` the harness's client uses (default: `hostAddress`). */
  clientAddress?: string;
  namespace: string;
  /** A file written from `bundleWorkflowCode(...).code`. */
  bundlePath: string;
  /** Restarts one service of the server (the cluster's `restartService`); needed by `restart-history`. */
  restartService?: (name: 'history') => Promise<void>;
}

/** Options of {@link runClusterChaos}. */
export interface ClusterChaosOptions {
  mode: ClusterChaosMode;
  temporal: ClusterChaosTemporal;
  /** The network the worker hosts are made in (the caller creates and destroys it). */
  network: NetnsNetwork;
  /** Worker hosts (default 2; the events land on one while the others carry on). */
  hosts?: number;
  runs: number;
  concurrency: number;
  /** Disruptions of the mode's kind. */
  events: number;
  failFraction: number;
  seed: number;
  /** PostgreSQL as the root namespace reaches it (default `127.0.0.1:5432`, user postgres, database test). */
  postgres?: { host: string; port: number; user: string; database: string };
  /** Restarts PostgreSQL; needed by `restart-postgres` (default {@link restartLocalPostgres}). */
  restartPostgres?: () => Promise<void>;
  log?: (line: string) => void;
  /** Directory for the host worker logs (default: a new temp dir). */
  workDir?: string;
}

/** What {@link runClusterChaos} found, counted at the downstream ledger. */
export interface ClusterChaosResult {
  mode: ClusterChaosMode;
  runs: number;
  hosts: number;
  /** Disruptions done. */
  events: number;
  /** Each event: what happened and where it landed. */
  eventLog: string[];
  effects: number;
  reconciles: { found: number; notFound: number };
  duplicates: number;
  missing: number;
  /** Runs that did not end in their expected state (completed, or compensated for a failing one). */
  unfinished: number;
  statuses: Record<string, number>;
  workerDeaths: number;
  problems: string[];
  durationMs: number;
  workDir: string;
}

/**
 * The line each cluster chaos mode ends with:
 * `cluster <mode>: runs R, hosts H, events E, effects X, duplicates D, missing M, unfinished U`.
 */
export function formatClusterChaosResult(result: ClusterChaosResult): string {
  return (
    `cluster ${result.mode}: runs ${result.runs}, hosts ${result.hosts}, events ${result.events}, ` +
    `effects ${result.effects}, duplicates ${result.duplicates}, missing ${result.missing}, unfinished ${result.unfinished}`
  );
}

/** Matches the end of {@link formatClusterChaosResult}'s line; the groups are duplicates, missing, unfinished. */
export const CLUSTER_CHAOS_RESULT_PATTERN = /duplicates (\d+), missing (\d+), unfinished (\d+)$/;

/**
 * Restarts this machine's PostgreSQL cluster (`pg_ctlcluster --skip-systemctl-redirect <version> main restart`), the
 * one version found under /etc/postgresql, and waits until it accepts connections again.
 */
export async function restartLocalPostgres(): Promise<void> {
  const versions = readdirSync('/etc/postgresql');
  if (versions.length !== 1)
    throw new Error(`Expected one PostgreSQL version in /etc/postgresql, found ${versions.join(', ')}.`);
  execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', versions[0]!, 'main', 'restart'], { stdio: 'ignore' });
  execFileSync('pg_isready', ['-q', '-t', '60', '-h', '127.0.0.1'], { stdio: 'ignore' });
}

/**
 * Chaos on the multi-host topology: `hosts` worker hosts (network namespaces, each one worker process with the
 * PostgreSQL key store) serve `runs` agent runs of non-idempotent charges and notifies (the plans of the
 * single-host chaos, test/support/chaos-run.ts), while `events` disruptions of the mode's kind land, each when a
 * host's tool call is at the downstream ledger (outside the namespaces). When every run has ended, the ledger is
 * checked: exactly one effect per step that should have one, none for the others.
 *
 * @example
 * ```ts
 * const network = NetnsNetwork.create();
 * try {
 *   const result = await runClusterChaos({ mode: 'partition', network, temporal, runs: 40, concurrency: 8, events: 4, failFraction: 0.3, seed: 1 });
 *   console.log(formatClusterChaosResult(result));
 * } finally {
 *   network.destroy();
 * }
 * ```
 */
export async function runClusterChaos(options: ClusterChaosOptions): Promise<ClusterChaosResult> {
  const started = Date.now();
  const log = options.log ?? ((line: string) => console.log(line));
  const random = createSeededRandom(options.seed);
  const ledgerRandom = createSeededRandom(options.seed ^ 0x5bd1e995);
  const workDir = options.workDir ?? mkdtempSync(join(tmpdir(), 'durable-tools-cluster-chaos-'));
  const { network, mode } = options;
  const pg = options.postgres ?? { host: '127.0.0.1', port: 5432, user: 'postgres', database: 'test' };
  const suffix = `${network.id}_${mode.replace('-', '_')}_${randomUUID().slice(0, 6)}`;
  const tables = { keys: `netns_keys_${suffix}`, transcripts: `netns_transcripts_${suffix}` };
  const taskQueue = `cluster-chaos-${mode}-${randomUUID().slice(0, 8)}`;
  const plans = planRuns(options, random, taskQueue);
  const ledger = await startChaosLedger(CLUSTER_CHAOS_SETTINGS.ledgerDelayMaxMs, ledgerRandom);
  const relays: TcpRelay[] = [];
  const hostCount = options.hosts ?? 2;
  const eventLog: string[] = [];
  const problems: string[] = [];
  const outcomes: RunOutcome[] = [];
  let allEnded = false;
  let eventsDone = options.events === 0;
  let startedRuns = 0;
  const connection = await Connection.connect({
    address: options.temporal.clientAddress ?? options.temporal.hostAddress,
  });
  const client = new Client({ connection, namespace: options.temporal.namespace });
  let workers: NetnsWorkers | undefined;
  const progress = setInterval(() => {
    log(
      `chaos: ${startedRuns}/${plans.length} started, ${outcomes.length} ended, events ${eventLog.length}/${options.events}, ` +
        `ledger effects ${ledger.effects.length}, worker deaths ${workers?.deaths.length ?? 0}`,
    );
  }, CLUSTER_CHAOS_SETTINGS.progressEveryMs);
  progress.unref();
  try {
    const ledgerPort = Number(new URL(ledger.url).port);
    const ledgerRelay = await startTcpRelay(
      { host: network.servicesHost, port: 0 },
      { host: '127.0.0.1', port: ledgerPort },
    );
    const pgRelay = await startTcpRelay({ host: network.servicesHost, port: 0 }, { host: pg.host, port: pg.port });
    relays.push(ledgerRelay, pgRelay);
    while (network.hosts.length < hostCount) network.addHost();
    const hosts = network.hosts.slice(0, hostCount);
    workers = new NetnsWorkers(
      {
        temporalAddress: options.temporal.hostAddress,
        namespace: options.temporal.namespace,
        taskQueue,
        bundlePath: options.temporal.bundlePath,
        ledgerUrl: `http://${ledgerRelay.address}`,
        postgresUrl: `postgres://${pg.user}@${pgRelay.address}/${pg.database}`,
        keysTable: tables.keys,
        transcriptsTable: tables.transcripts,
        workDir,
      },
      log,
    );
    const w = workers;
    for (const host of hosts) await w.start(host);
    log(
      `chaos: cluster ${mode}: ${hosts.length} hosts (${hosts.map((h) => `${h.namespace} ${h.address}`).join(', ')}), ` +
        `Temporal at ${options.temporal.hostAddress}, PostgreSQL via ${pgRelay.address}, ledger via ${ledgerRelay.address}`,
    );
    // The last runs start only after the last event (or when nothing else is in flight), so that every event
    // still finds work.
    const reserved = plans.length - Math.ceil(plans.length / Math.max(1, options.events));
    const mayStart = (index: number): boolean => eventsDone || index < reserved || startedRuns - outcomes.length < 1;
    const runAll = async (): Promise<void> => {
      let next = 0;
      const slot = async (): Promise<void> => {
        while (next < plans.length) {
          if (!mayStart(next)) {
            await sleep(50);
            continue;
          }
          const plan = plans[next++]!;
          startedRuns += 1;
          outcomes.push(await runOne(client, plan, taskQueue, undefined));
        }
      };
      await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency, plans.length)) }, slot));
    };
    const disrupt = async (): Promise<void> => {
      try {
        while (eventLog.length < options.events && !allEnded) {
          const write = await nextHostWrite(ledger, w, () => allEnded, Math.floor(random() * 6));
          if (allEnded) break;
          const line = await applyEvent(options, w, hosts, write, random, log);
          eventLog.push(line);
          log(`chaos: event ${eventLog.length}/${options.events}: ${line}`);
          await sleep(between(random, CLUSTER_CHAOS_SETTINGS.eventGapMs));
        }
      } finally {
        eventsDone = true;
      }
    };
    const runs = withDeadline(runAll(), CLUSTER_CHAOS_SETTINGS.runsDeadlineMs + plans.length * 5_000).finally(() => {
      allEnded = true;
    });
    await Promise.all(
      [runs, disrupt()].map((phase) =>
        phase.catch((error: unknown) => {
          problems.push(`The harness failed: ${describe(error)}`);
          allEnded = true;
        }),
      ),
    );
  } finally {
    allEnded = true;
    clearInterval(progress);
    await workers?.stop();
    await connection.close();
    for (const relay of relays) await relay.close();
    await ledger.close();
    // The transcript store keeps large messages in a `<table>_payloads` table beside its own.
    await dropTables(pg, [...Object.values(tables), `${tables.transcripts}_payloads`]);
  }
  const checked = checkLedger(plans, outcomes, ledger);
  checked.problems.push(...problems);
  if (eventLog.length < options.events) {
    checked.problems.push(`Only ${eventLog.length} of ${options.events} events happened before all runs ended.`);
  }
  for (const death of workers?.deaths ?? []) {
    checked.problems.push(
      `Host ${death.host} worker ${death.generation} exited by itself (code ${death.code}, signal ${death.signal})`,
    );
  }
  const finished = outcomes.filter(
    ({ plan, result }) => result?.status === (plan.fails ? 'compensated' : 'completed'),
  ).length;
  return {
    mode,
    runs: plans.length,
    hosts: hostCount,
    events: eventLog.length,
    eventLog,
    effects: ledger.effects.length,
    reconciles: { ...ledger.reconciles },
    duplicates: checked.duplicates,
    missing: checked.missing,
    unfinished: plans.length - finished,
    statuses: countStatuses(outcomes),
    workerDeaths: workers?.deaths.length ?? 0,
    problems: checked.problems,
    durationMs: Date.now() - started,
    workDir,
  };
}

/** A ledger write that reached the downstream from a host's worker (its request is in flight now). */
interface HostWrite {
  event?: LedgerEvent;
  worker?: HostWorker;
}

/**
 * Waits for the `skip + 1`-th write that arrives at the ledger from a live host worker (the event lands while that
 * call is in flight), or {@link CLUSTER_CHAOS_SETTINGS.triggerFallbackMs} (then no write: the event lands anyway).
 */
function nextHostWrite(
  ledger: LedgerServer,
  workers: NetnsWorkers,
  ended: () => boolean,
  skip: number,
): Promise<HostWrite> {
  return new Promise((resolveWrite) => {
    let seen = 0;
    const done = (write: HostWrite): void => {
      off();
      clearTimeout(fallback);
      clearInterval(poll);
      resolveWrite(write);
    };
    const off = ledger.onEvent((event) => {
      if (event.phase !== 'received') return;
      const worker = workers.byPid(event.workerPid);
      if (worker && seen++ >= skip) done({ event, worker });
    });
    const fallback = setTimeout(() => done({}), CLUSTER_CHAOS_SETTINGS.triggerFallbackMs);
    const poll = setInterval(() => ended() && done({}), 100);
  });
}

/** Does one event of the mode; its description. */
async function applyEvent(
  options: ClusterChaosOptions,
  workers: NetnsWorkers,
  hosts: readonly NetnsHost[],
  write: HostWrite,
  random: () => number,
  log: (line: string) => void,
): Promise<string> {
  const at = write.event ? `${write.event.kind} ${write.event.key} at the ledger` : 'no write seen (random moment)';
  const host = write.worker?.host ?? hosts[Math.floor(random() * hosts.length)]!;
  switch (options.mode) {
    case 'kill-host': {
      await workers.killHost(host);
      const rebootMs = between(random, CLUSTER_CHAOS_SETTINGS.hostRebootMs);
      log(`chaos: host ${host.index} killed while its ${at}; back in ${rebootMs} ms`);
      await sleep(rebootMs);
      await workers.start(host);
      return `SIGKILL host ${host.index} while its ${at}; restarted after ${rebootMs} ms`;
    }
    case 'partition': {
      host.partition();
      const partitionMs = between(random, CLUSTER_CHAOS_SETTINGS.partitionMs);
      log(`chaos: host ${host.index} cut off from Temporal while its ${at}, for ${partitionMs} ms`);
      await sleep(partitionMs);
      host.heal();
      return `host ${host.index} cut off from Temporal for ${partitionMs} ms while its ${at}, then healed`;
    }
    case 'restart-history': {
      const restart = options.temporal.restartService;
      if (!restart) throw new Error('restart-history needs temporal.restartService (a Temporal cluster).');
      const t0 = Date.now();
      await restart('history');
      return `history service restarted (${Date.now() - t0} ms) while ${at}`;
    }
    case 'restart-postgres': {
      const t0 = Date.now();
      await (options.restartPostgres ?? restartLocalPostgres)();
      return `PostgreSQL restarted (${Date.now() - t0} ms) while ${at}`;
    }
  }
}

async function dropTables(
  pg: { host: string; port: number; user: string; database: string },
  tables: string[],
): Promise<void> {
  const admin = new Pool({ host: pg.host, port: pg.port, user: pg.user, database: pg.database, max: 1 });
  admin.on('error', () => undefined);
  for (const table of tables) await admin.query(`DROP TABLE IF EXISTS "${table}"`).catch(() => undefined);
  await admin.end().catch(() => undefined);
}

function between(random: () => number, range: { min: number; max: number }): number {
  return range.min + Math.floor(random() * (range.max - range.min));
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolveSleep) => setTimeout(resolveSleep, ms));
}
