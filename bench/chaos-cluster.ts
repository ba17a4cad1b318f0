/**
 * `npm run chaos -- --topology cluster [--mode kill-host|partition|restart-history|restart-postgres] [--server dev]`:
 * chaos on the multi-host topology (docs/operations.md, "Multi-host chaos"). A Temporal cluster (frontend, history,
 * matching and worker services on this machine's PostgreSQL, test/support/temporal-cluster.ts) bound to an address
 * the worker hosts reach; worker hosts in network namespaces (test/support/netns-network.ts), each one worker process
 * with the PostgreSQL key store; a downstream ledger outside the namespaces that counts the effects. Without
 * `--mode`, every mode runs in turn, each with new worker processes, tables and task queue on the same hosts. `--server dev` runs on the Temporal
 * CLI's dev server instead (no `restart-history` there).
 *
 * Each mode ends with its result line `cluster <mode>: runs R, hosts H, events E, effects X, duplicates D, missing M,
 * unfinished U`; the exit code is non-zero when anything is duplicated, missing or unfinished, a worker died by
 * itself, or a run ended in the wrong state.
 *
 * Sizes from the environment: CHAOS_RUNS (per mode, default 40), CHAOS_CONCURRENCY (8), CHAOS_EVENTS (4 per mode),
 * CHAOS_HOSTS (2), CHAOS_FAIL_FRACTION (0.3), CHAOS_SEED.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CLUSTER_CHAOS_MODES,
  formatClusterChaosResult,
  runClusterChaos,
  type ClusterChaosMode,
} from '../test/support/netns-chaos-run';
import { NetnsNetwork, probeNetnsSupport } from '../test/support/netns-network';
import { startNetnsTemporal } from '../test/support/netns-temporal';
import { flag, fromEnv, writeWorkflowBundle } from './bench-setup';

/** Sizes of one mode of the cluster chaos. */
export const CLUSTER_CHAOS_BENCH_DEFAULTS = {
  runs: 40,
  concurrency: 8,
  events: 4,
  hosts: 2,
  failFraction: 0.3,
  seed: 20_261_207,
} as const;

/** `--topology cluster` or `--topology=cluster` among `args`. */
export function wantsClusterTopology(args: readonly string[]): boolean {
  const topology = flag(args, 'topology');
  if (topology !== undefined && topology !== 'cluster' && topology !== 'single') {
    throw new Error(`--topology must be single or cluster; got "${topology}".`);
  }
  return topology === 'cluster';
}

function modesFromArgs(args: readonly string[]): readonly ClusterChaosMode[] {
  const mode = flag(args, 'mode');
  if (mode === undefined || mode === 'all') return CLUSTER_CHAOS_MODES;
  if (!(CLUSTER_CHAOS_MODES as readonly string[]).includes(mode)) {
    throw new Error(
      `--mode must be one of ${CLUSTER_CHAOS_MODES.join(', ')} (or all) with --topology cluster; got "${mode}".`,
    );
  }
  return [mode as ClusterChaosMode];
}

/**
 * Runs the cluster chaos modes asked for in `args`; resolves with the exit code (0 when every mode ended with
 * `duplicates 0, missing 0, unfinished 0` and no problem).
 */
export async function runClusterChaosBench(args: readonly string[]): Promise<number> {
  const log = (line: string): void => console.log(line);
  const support = probeNetnsSupport();
  if (!support.ok) {
    console.error(`chaos: --topology cluster needs network namespaces: ${support.reason}`);
    return 2;
  }
  const modes = modesFromArgs(args);
  const server = flag(args, 'server') === 'dev' ? 'dev' : 'cluster';
  if (server === 'dev' && modes.includes('restart-history')) {
    throw new Error('restart-history needs the Temporal cluster: drop --server dev or pick another --mode.');
  }
  const sizes = {
    runs: fromEnv('CHAOS_RUNS', CLUSTER_CHAOS_BENCH_DEFAULTS.runs),
    concurrency: fromEnv('CHAOS_CONCURRENCY', CLUSTER_CHAOS_BENCH_DEFAULTS.concurrency),
    events: fromEnv('CHAOS_EVENTS', CLUSTER_CHAOS_BENCH_DEFAULTS.events),
    hosts: fromEnv('CHAOS_HOSTS', CLUSTER_CHAOS_BENCH_DEFAULTS.hosts),
    failFraction: fromEnv('CHAOS_FAIL_FRACTION', CLUSTER_CHAOS_BENCH_DEFAULTS.failFraction),
    seed: fromEnv('CHAOS_SEED', CLUSTER_CHAOS_BENCH_DEFAULTS.seed),
  };
  const workDir = mkdtempSync(join(tmpdir(), 'durable-tools-chaos-cluster-'));
  const network = NetnsNetwork.create();
  const onSignal = (): void => {
    network.destroy();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const lines: string[] = [];
  let failed = false;
  try {
    const server_ = await startNetnsTemporal(network, server, workDir, log);
    const temporal = { ...server_, bundlePath: '' };
    try {
      temporal.bundlePath = await writeWorkflowBundle(workDir);
      log(
        `chaos: --topology cluster on ${server === 'cluster' ? 'the Temporal cluster' : 'the dev server'} at ${temporal.hostAddress}; ${JSON.stringify(sizes)}; logs in ${workDir}`,
      );
      for (const [i, mode] of modes.entries()) {
        const result = await runClusterChaos({
          ...sizes,
          seed: sizes.seed + i,
          mode,
          network,
          temporal,
          log,
          workDir: mkdtempSync(join(workDir, `${mode}-`)),
        });
        log(
          `chaos: cluster ${mode}: ${(result.durationMs / 1000).toFixed(1)} s; statuses ${JSON.stringify(result.statuses)}; ` +
            `unknown outcomes reconciled: ${result.reconciles.found} effect found, ${result.reconciles.notFound} not found; ` +
            `worker deaths ${result.workerDeaths}`,
        );
        for (const event of result.eventLog) log(`chaos: cluster ${mode}: ${event}`);
        for (const problem of result.problems.slice(0, 30)) log(`chaos: PROBLEM ${problem}`);
        const line = formatClusterChaosResult(result);
        lines.push(line);
        log(line);
        if (result.duplicates > 0 || result.missing > 0 || result.unfinished > 0 || result.problems.length > 0)
          failed = true;
      }
    } finally {
      await server_.stop();
    }
  } finally {
    network.destroy();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  if (lines.length > 1) for (const line of lines) log(line);
  return failed ? 1 : 0;
}
