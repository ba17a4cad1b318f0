/**
 * `npm run bench:recovery [-- --trials N]`: how long a durable-tools step interrupted by a worker SIGKILL takes
 * to go on, with the engine's default settings. Each trial starts a fresh worker process (the bench:peers
 * durable-tools service, its model taking `MODEL_TURN_MS` per turn), starts one 10-step run and SIGKILLs the
 * worker at a chosen moment, starts a new worker process and measures the time from the kill until the run
 * records its next step at the ledger:
 * - `tool call`: the moment the ledger records the effect of step 3 (the tool has not heard the answer, its
 *   idempotency key is held by the dead attempt);
 * - `model turn`: the moment the model turn after step 3 begins (no key is held).
 * Also printed: the time until the run's next step BEGINS after the interrupted one (`next step began`): for the
 * tool call, the model turn after it (which excludes that turn's own `MODEL_TURN_MS`); for the model turn, the
 * tool call it chose (the same as `went on`).
 * With `--standby` a second worker polls from the start and the one that ran the step is killed (a new one is
 * started all the same): the step then waits for no start-up, only for the timeouts.
 * Printed, never asserted; the last line: `recovery: tool call p95 X s, model turn p95 Y s`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LoadSampler, machineLine, median } from '../bench-report';
import { modelTurnKey } from './durable-tools-service';
import { startPeerLedger, type PeerLedger } from './peer-ledger';
import { percentile } from './peers-report';
import { durableToolsSystem, type PeerSystem } from './peer-systems';
import { startService } from './service-process';

const MODEL_TURN_MS = 1_000;
const KILL_AFTER_STEP = 3;

type Moment = 'tool call' | 'model turn';

interface Trial {
  recoverMs: number;
  /** Until the step after the interrupted one began (see the file's comment). */
  nextStepMs: number;
  restartMs: number;
}

function trialsFromArgs(args: readonly string[]): number {
  const at = args.indexOf('--trials');
  const value = at >= 0 ? Number(args[at + 1]) : 5;
  if (!Number.isInteger(value) || value < 1) throw new Error('--trials must be a positive integer.');
  return value;
}

async function trial(
  system: PeerSystem,
  ledger: PeerLedger,
  moment: Moment,
  n: number,
  standby: boolean,
): Promise<Trial> {
  const runId = `recovery-${moment === 'tool call' ? 'tool' : 'model'}-${n}-${Date.now().toString(36)}`;
  const killKey = moment === 'tool call' ? `/${KILL_AFTER_STEP}` : modelTurnKey(runId, KILL_AFTER_STEP);
  let service = await startService(system.spec);
  // --standby: a second worker polls the same task queue (and key store) from the start; the one that sent the
  // triggering write is killed, the other goes on, and a new one is started all the same.
  const other = standby ? await startService(system.spec) : undefined;
  let killedAt = 0;
  let restartMs = 0;
  let nextStepMs = 0;
  const nextTurnKey = modelTurnKey(runId, KILL_AFTER_STEP);
  const recovered = new Promise<number>((resolve) => {
    const stop = ledger.onEffect((key, _total, senderPid) => {
      if (!key.startsWith(`${runId}/`)) return;
      const modelMark = key.slice(runId.length).startsWith('/model-turn-');
      if (killedAt === 0 && (moment === 'tool call' ? key.endsWith(killKey) && !modelMark : key === killKey)) {
        const victim = other && other.pid === senderPid ? other : service;
        const survivor = victim === service ? other : service;
        victim.kill();
        killedAt = performance.now();
        if (survivor) void survivor.attach(runId).catch(() => undefined);
        const t0 = performance.now();
        void startService(system.spec).then((next) => {
          service = next;
          restartMs = performance.now() - t0;
          void next.attach(runId).catch(() => undefined);
        });
        return;
      }
      // The tool call's step done: the model turn after it begins.
      if (killedAt > 0 && moment === 'tool call' && key === nextTurnKey && nextStepMs === 0) {
        nextStepMs = performance.now() - killedAt;
      }
      // The next step of the run: a tool effect after the kill (not the model's own mark).
      if (killedAt > 0 && !modelMark && !key.endsWith(`/${KILL_AFTER_STEP}`)) {
        stop();
        const ms = performance.now() - killedAt;
        if (moment === 'model turn') nextStepMs = ms;
        resolve(ms);
      }
    });
  });
  service.run(runId);
  const recoverMs = await recovered;
  await waitFor(() => restartMs > 0);
  await service.attach(runId);
  await service.stop();
  await other?.stop();
  return { recoverMs, nextStepMs, restartMs };
}

async function waitFor(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 50));
}

async function main(): Promise<void> {
  const trials = trialsFromArgs(process.argv.slice(2));
  const standby = process.argv.includes('--standby');
  const dir = mkdtempSync(join(tmpdir(), 'durable-tools-bench-recovery-'));
  const ledger = await startPeerLedger();
  const system = await durableToolsSystem(
    { ledgerUrl: ledger.url, steps: 10, dir, postgresUrl: '', output: 'ignore' },
    {
      name: 'durable-tools',
      // A worker started the way createWorker starts by default (RECOVERY_BUNDLE=bundle-at-start: without the cache).
      service: {
        modelTurnMs: MODEL_TURN_MS,
        bundlePath: process.env.RECOVERY_BUNDLE === 'bundle-at-start' ? 'bundle-at-start' : 'cache',
      },
    },
  );
  const load = new LoadSampler();
  const results: Record<Moment, Trial[]> = { 'tool call': [], 'model turn': [] };
  try {
    for (let n = 0; n < trials; n++) {
      for (const moment of ['model turn', 'tool call'] as const) {
        const result = await trial(system, ledger, moment, n, standby);
        results[moment].push(result);
        process.stderr.write(
          `bench:recovery: trial ${n + 1}/${trials} kill during a ${moment}: the step went on after ` +
            `${(result.recoverMs / 1000).toFixed(1)} s, the next step began after ${(result.nextStepMs / 1000).toFixed(1)} s (worker start ${(result.restartMs / 1000).toFixed(1)} s, load ${load.sample().toFixed(1)})\n`,
        );
      }
    }
  } finally {
    await system.close();
    await ledger.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const s = (ms: number) => (ms / 1000).toFixed(1);
  for (const moment of ['tool call', 'model turn'] as const) {
    const list = results[moment];
    console.log(
      `kill during a ${moment}: step went on after ${list.map((t) => s(t.recoverMs)).join(', ')} s ` +
        `(median ${s(median(list.map((t) => t.recoverMs)))}, p95 ${s(
          percentile(
            list.map((t) => t.recoverMs),
            95,
          ),
        )}); ` +
        `next step began after ${list.map((t) => s(t.nextStepMs)).join(', ')} s (p95 ${s(
          percentile(
            list.map((t) => t.nextStepMs),
            95,
          ),
        )}); ` +
        `worker start ${s(median(list.map((t) => t.restartMs)))} s median`,
    );
  }
  console.log(`machine: ${machineLine()}; load average ${load.range()}`);
  console.log(
    `recovery: tool call p95 ${s(
      percentile(
        results['tool call'].map((t) => t.recoverMs),
        95,
      ),
    )} s, ` +
      `model turn p95 ${s(
        percentile(
          results['model turn'].map((t) => t.recoverMs),
          95,
        ),
      )} s`,
  );
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
