import { CHAOS_EFFECT_KINDS } from '../support/chaos-tools';
import { CHAOS_SUMMARY_PATTERN, formatChaosSummary, runChaos, runCompensationKill } from '../support/chaos-run';
import { createWorker } from '../../src/runtime/create-worker';
import { WORKER_TUNING } from '../../src/runtime/worker-tuning';
import { connectTestTemporal, testServer, uniqueTaskQueue } from '../support/temporal-test-env';

/**
 * Issue 4 (crash test) and issue 5 ("SIGKILL during compensation") on the real dev server. The worker is
 * a separate node process, SIGKILLed and restarted; its idempotency keys and transcripts are SQLite files
 * shared by every generation. Effects are counted at a ledger that does not deduplicate, because
 * Temporal's history keeps only an activity's final attempt. The full-size version is `npm run chaos`.
 */

/** Off the fast path (`fastPath: false`): every call a regular activity. */
const SMALL_CHAOS = { runs: 14, concurrency: 6, kills: 3, failFraction: 0.35, seed: 4, fastPath: false } as const;
/**
 * The runs' default, the fast path (docs/fast-path.md): the completed runs' last call, `notify`, has no undo and so
 * runs inside the fused step of its turn (`callModelAndTools`); the first kill waits for a notify at the ledger.
 */
const SMALL_FAST_PATH = { runs: 12, concurrency: 6, kills: 3, failFraction: 0.3, seed: 11 } as const;
/**
 * Pauses cycle through the moments: before the send, after a claim (issue 8), then while the workflow thread
 * runs an activation (issue 20: the moment at which a pause killed the worker).
 */
const SMALL_PAUSES = { runs: 10, concurrency: 3, kills: 0, pauses: 3, failFraction: 0.3, seed: 8 } as const;

function temporal() {
  const { address, namespace, bundlePath } = testServer();
  return { address, namespace, bundlePath };
}

const log = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

test('SIGKILLs of the worker during agent runs on regular activities: every run completes or compensates, one effect per key', async () => {
  const result = await runChaos({ ...SMALL_CHAOS, temporal: temporal(), log });
  log(
    `chaos (small): ${formatChaosSummary(result)}; statuses ${JSON.stringify(result.statuses)}; ` +
      `reconciles ${JSON.stringify(result.reconciles)}`,
  );

  expect(result.problems).toEqual([]);
  expect(result.workerDeaths).toBe(0);
  expect(result.kills).toBe(SMALL_CHAOS.kills);
  expect(result.duplicates).toBe(0);
  expect(result.missing).toBe(0);
  expect(Object.keys(result.statuses).sort()).toEqual(['compensated', 'completed']);
  expect(result.statuses.completed! + result.statuses.compensated!).toBe(SMALL_CHAOS.runs);
  // Off the fast path every notify is a regular activity (scheduled once; a kill retries the same activity).
  expect(result.notifyCalls).toMatchObject({ fused: 0, local: 0, fusedSteps: 0 });
  expect(result.notifyCalls!.regular).toBe(result.statuses.completed);
}, 600_000); // a worker may take a minute to start on a loaded machine, and each kill starts one

test('SIGKILLs of the worker on the fast path, the default, with the last call of each completed run inside a fused step: one effect per key', async () => {
  const result = await runChaos({ ...SMALL_FAST_PATH, temporal: temporal(), log });
  log(
    `chaos (fast path): ${formatChaosSummary(result)}; statuses ${JSON.stringify(result.statuses)}; ` +
      `kills at a notify ${result.killsDuringNotify}; notify calls ${JSON.stringify(result.notifyCalls)}; ` +
      `reconciles ${JSON.stringify(result.reconciles)}`,
  );

  expect(result.problems).toEqual([]);
  expect(result.workerDeaths).toBe(0);
  expect(result.kills).toBe(SMALL_FAST_PATH.kills);
  expect(result.duplicates).toBe(0);
  expect(result.missing).toBe(0);
  expect(result.statuses.completed! + (result.statuses.compensated ?? 0)).toBe(SMALL_FAST_PATH.runs);
  // Fusion happened, as the histories show: every completed run's notify ran once, locally (none as a regular
  // activity), and fused steps ran some of them (a call that fails inside a fused step, e.g. after a kill, runs
  // again as its own local activity).
  const calls = result.notifyCalls!;
  expect(calls.histories).toBe(result.statuses.completed);
  expect(calls.regular).toBe(0);
  expect(calls.fused + calls.local).toBe(calls.histories);
  expect(calls.fused).toBeGreaterThan(0);
}, 600_000); // a worker may take a minute to start on a loaded machine, and each kill starts one

test('SIGKILL of the worker during compensation still gives exactly one compensation effect per key', async () => {
  const { result, kills, effectsByKey, reconciles } = await runCompensationKill({ temporal: temporal(), log });
  log(`chaos (compensation): reconciles ${JSON.stringify(reconciles)}`);

  expect(kills).toHaveLength(3);
  // The kills landed where intended: before the refund of step 3 was recorded, after that of step 2 was.
  expect(kills[0]?.refundsRecorded).toBe(0);
  expect(kills[1]?.refundsRecorded).toBe(2);
  // Both refunds interrupted after reaching the ledger were found there by the retry, not repeated.
  expect(reconciles.found).toBeGreaterThanOrEqual(2);
  expect(result.status).toBe('compensated');
  expect(result.steps.map((s) => [s.stepId, s.status])).toEqual([
    [1, 'compensated'],
    [2, 'compensated'],
    [3, 'compensated'],
    [4, 'failed'],
  ]);
  const { charge, refund } = CHAOS_EFFECT_KINDS;
  const expected: Record<string, Record<string, number>> = {};
  for (const step of [1, 2, 3]) {
    expected[`${result.runKey}/${step}`] = { [charge]: 1 };
    expected[`${result.runKey}/${step}/undo`] = { [refund]: 1 };
  }
  // The rejected charge (step 4) left no effect and so no refund.
  expect(effectsByKey).toEqual(expected);
}, 600_000); // a worker may take a minute to start on a loaded machine, and each kill starts one

test('SIGSTOP of a worker holding a key for longer than its lease, with a second worker taking over: one effect per key, no worker dies', async () => {
  const result = await runChaos({ ...SMALL_PAUSES, mode: 'pause', temporal: temporal(), log });
  log(
    `chaos (pause): ${formatChaosSummary(result)}; pauses at ${JSON.stringify(result.pausesAt)}; ` +
      `statuses ${JSON.stringify(result.statuses)}; reconciles ${JSON.stringify(result.reconciles)}`,
  );

  const summary = CHAOS_SUMMARY_PATTERN.exec(formatChaosSummary(result));
  expect(summary).not.toBeNull();
  const [runs, kills, pauses, , duplicates, missing, workerDeaths] = summary!.slice(1).map(Number);
  expect({ runs, kills, pauses, duplicates, missing, workerDeaths }).toEqual({
    runs: SMALL_PAUSES.runs,
    kills: 0,
    pauses: SMALL_PAUSES.pauses,
    duplicates: 0,
    missing: 0,
    workerDeaths: 0,
  });
  expect(result.deaths).toEqual([]);
  expect(result.problems).toEqual([]);
  // The moments that matter are tried first: stopped in synchronous work just before the send, after a claim,
  // and while the workflow thread ran an activation. A moment that does not come (too little in flight on a loaded
  // machine) gives way to a random one, so only the count is certain.
  const pausesAt = Object.values(result.pausesAt).reduce((sum, n) => sum + (n ?? 0), 0);
  expect(pausesAt).toBe(SMALL_PAUSES.pauses);
  expect(result.statuses.completed! + (result.statuses.compensated ?? 0)).toBe(SMALL_PAUSES.runs);
}, 600_000);

test('a worker from createWorker runs workflow activations without the deadlock timeout that a pause turned into a crash', async () => {
  // docs/pauses.md: after a pause longer than the SDK's 5 s timeout, the timeout fired mid-activation and
  // corrupted the async-hook stack. The option is one Temporal reads but does not declare, so this checks
  // that the compiled worker really got it (an SDK upgrade that stops reading it would fail here).
  const temporal = await connectTestTemporal();
  try {
    const { worker } = await createWorker({
      // Stores not given here stay in memory (durable ones are the default).
      stores: 'memory',
      tools: [],
      connection: temporal.nativeConnection,
      settings: { namespace: testServer().namespace, taskQueue: uniqueTaskQueue('deadlock-timeout') },
      workflowBundle: { codePath: testServer().bundlePath },
    });
    expect(worker.options.isolateExecutionTimeoutMs).toBe(2 ** 32 - 1);
    expect(WORKER_TUNING.isolateExecutionTimeout).toBe('4294967295 ms');
    await worker.runUntil(Promise.resolve());
  } finally {
    await temporal.close();
  }
}, 120_000);
