/**
 * `npm run chaos [-- --mode kill|pause|stress]`: the full-size crash test. `npm run chaos -- --topology cluster` runs
 * the multi-host chaos instead (worker hosts in network namespaces, a Temporal cluster: bench/chaos-cluster.ts). Against TEMPORAL_ADDRESS when
 * set, else a headless dev server it starts itself. Starts agent runs of non-idempotent charges (a fraction
 * of them fail and compensate; those that complete send a non-idempotent `notify` last, which has no undo and
 * so runs inside a fused step on the fast path) whose tools rely on `reconcile` alone (the ledger deduplicates
 * nothing), and counts the effects at that ledger. Modes:
 * - `kill` (default): SIGKILLs the worker process at random moments and starts a new one;
 * - `pause`: two workers; SIGSTOPs one for longer than the lease — just before the effect request is sent
 *   and in synchronous work after a claim, while its workflow thread runs an activation, just after a request
 *   left, and at random — then SIGCONTs it; the run starts are paced so that every pause lands while runs
 *   are in flight;
 * - `stress`: busy loops saturate every core for the whole run, plus the kills.
 * Its last line is `runs R, kills K, pauses P, effects E, duplicates D, missing M, worker deaths W` (worker
 * deaths: worker processes that exited without the harness killing them); the exit code is non-zero when
 * anything is duplicated or missing, a worker died, or a run ended in the wrong state.
 *
 * Sizes from the environment: CHAOS_RUNS, CHAOS_CONCURRENCY, CHAOS_KILLS, CHAOS_PAUSES, CHAOS_FAIL_FRACTION,
 * CHAOS_SEED; CHAOS_PAUSE_MOMENTS (e.g. `in-activation`) picks the pause moments; the runs take the fast path,
 * the default (docs/fast-path.md); CHAOS_FAST_PATH=0 starts them with `fastPath: false` (regular activities). The worker processes get
 * the harness's environment, so DT_CHAOS_ISOLATE_EXECUTION_TIMEOUT=5s brings back the SDK's workflow deadlock
 * timeout, to reproduce what docs/pauses.md describes.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectionSettingsFromEnv } from '../src/client/connection-settings';
import { startDevServer } from '../src/dev-server/dev-server';
import { runClusterChaosBench, wantsClusterTopology } from './chaos-cluster';
import { flag, fromEnv, writeWorkflowBundle } from './bench-setup';
import {
  CHAOS_PAUSE_MOMENTS,
  formatChaosSummary,
  runChaos,
  type ChaosMode,
  type ChaosPauseAt,
} from '../test/support/chaos-run';

/** Full size of the chaos run (issue 4: at least 200 runs, 20 in flight, 20 kills). */
export const CHAOS_BENCH_DEFAULTS = {
  runs: 200,
  concurrency: 20,
  kills: 20,
  pauses: 20,
  failFraction: 0.3,
  seed: 20_240_604,
} as const;

const MODES: readonly ChaosMode[] = ['kill', 'pause', 'stress'];

/** CHAOS_PAUSE_MOMENTS: a comma-separated list of pause moments to cycle through (default: all, in order). */
function pauseMomentsFromEnv(): ChaosPauseAt[] | undefined {
  const raw = process.env.CHAOS_PAUSE_MOMENTS;
  if (raw === undefined || raw.trim() === '') return undefined;
  const moments = raw.split(',').map((m) => m.trim());
  for (const moment of moments) {
    if (!(CHAOS_PAUSE_MOMENTS as readonly string[]).includes(moment)) {
      throw new Error(`CHAOS_PAUSE_MOMENTS: "${moment}" is not one of ${CHAOS_PAUSE_MOMENTS.join(', ')}.`);
    }
  }
  return moments as ChaosPauseAt[];
}

/** CHAOS_FAST_PATH: `0` opts the runs out of the fast path, `1` asks for it; absent, the runs take the default. */
function fastPathFromEnv(value: string | undefined): { fastPath?: boolean } {
  if (value === undefined || value === '') return {};
  if (value === '0' || value === '1') return { fastPath: value === '1' };
  throw new Error(`CHAOS_FAST_PATH must be 0 or 1; got "${value}".`);
}

/** `--mode X` or `--mode=X`; kill when absent. */
function modeFromArgs(args: readonly string[]): ChaosMode {
  const value = flag(args, 'mode');
  if (value === undefined) return 'kill';
  if (!(MODES as readonly string[]).includes(value)) {
    throw new Error(`--mode must be one of ${MODES.join(', ')}; got "${value}".`);
  }
  return value as ChaosMode;
}

/**
 * The Temporal client retries some failed calls from a timer; one that fires after its connection closed
 * throws "Channel has been shut down" from that timer, where no caller can catch it. The harness cancels
 * and drains its calls before it closes the connection, so this should not happen; if one slips through
 * after the close it is reported, not allowed to kill the run before its result line.
 */
let clientClosed = false;
process.on('uncaughtException', (error: Error) => {
  if (clientClosed && /Channel has been shut down/.test(error.message)) {
    console.error(`chaos: a client retry fired after the connection closed (ignored): ${error.message}`);
    return;
  }
  console.error(error.stack ?? error.message);
  process.exit(2);
});

async function main(): Promise<number> {
  if (wantsClusterTopology(process.argv.slice(2))) return runClusterChaosBench(process.argv.slice(2));
  const options = {
    mode: modeFromArgs(process.argv.slice(2)),
    pauses: fromEnv('CHAOS_PAUSES', CHAOS_BENCH_DEFAULTS.pauses),
    runs: fromEnv('CHAOS_RUNS', CHAOS_BENCH_DEFAULTS.runs),
    concurrency: fromEnv('CHAOS_CONCURRENCY', CHAOS_BENCH_DEFAULTS.concurrency),
    kills: fromEnv('CHAOS_KILLS', CHAOS_BENCH_DEFAULTS.kills),
    failFraction: fromEnv('CHAOS_FAIL_FRACTION', CHAOS_BENCH_DEFAULTS.failFraction),
    seed: fromEnv('CHAOS_SEED', CHAOS_BENCH_DEFAULTS.seed),
    ...fastPathFromEnv(process.env.CHAOS_FAST_PATH),
  };
  const pauseMoments = pauseMomentsFromEnv();
  const workDir = mkdtempSync(join(tmpdir(), 'durable-tools-chaos-'));
  const settings = connectionSettingsFromEnv();
  const server = settings.addressFromEnv
    ? undefined
    : await startDevServer({ ui: false, logFile: join(workDir, 'temporal-server.log') });
  const address = server?.address ?? settings.address;
  const namespace = server?.namespace ?? settings.namespace;
  try {
    console.log(`chaos: Temporal at ${address} (${server ? 'dev server started for this run' : 'TEMPORAL_ADDRESS'})`);
    console.log(`chaos: ${JSON.stringify(options)}; worker logs and stores in ${workDir}`);
    const bundlePath = await writeWorkflowBundle(workDir);
    const result = await runChaos({
      ...options,
      ...(pauseMoments ? { pauseMoments } : {}),
      temporal: { address, namespace, bundlePath },
      workDir,
    }).finally(() => {
      clientClosed = true;
    });
    const seconds = (result.durationMs / 1000).toFixed(1);
    console.log(
      `chaos: mode ${result.mode}; ${seconds} s; statuses ${JSON.stringify(result.statuses)}; ` +
        `pauses at ${JSON.stringify(result.pausesAt)} (${result.pausesInNotify} in a notify call); ` +
        `${result.busyLoops} busy loops; ` +
        `${result.killsDuringCompensation} kills while a refund was at the ledger, ` +
        `${result.killsDuringNotify} while a notify was; ` +
        `notify calls ${JSON.stringify(result.notifyCalls ?? 'unknown')}; ` +
        `unknown outcomes reconciled: ${result.reconciles.found} effect found, ${result.reconciles.notFound} not found`,
    );
    for (const problem of result.problems.slice(0, 50)) console.log(`chaos: PROBLEM ${problem}`);
    if (result.problems.length > 50) console.log(`chaos: ... and ${result.problems.length - 50} more problems`);
    console.log(formatChaosSummary(result));
    const failed = result.duplicates > 0 || result.missing > 0 || result.workerDeaths > 0 || result.problems.length > 0;
    return failed ? 1 : 0;
  } finally {
    await server?.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(2);
  },
);
