import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { Worker } from '@temporalio/worker';
import { useTestTemporal, uniqueTaskQueue, testServer } from '../support/temporal-test-env';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { createWorker } from '../../src/runtime/create-worker';
import { SqliteToolLimitStore } from '../../src/stores/limits/sqlite-tool-limit-store';
import { runningCalls } from '../../src/long-calls/live-progress';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import { startLimitsDownstream, type LimitsDownstream } from '../support/limits-downstream';
import { limitedCallTool, type LimitedToolOptions } from '../support/limit-tools';
import { LIMITS_WORKER } from '../support/limits-worker';
import { killProcess, spawnTestWorkerProcess } from '../support/worker-process';
import { waitFor } from '../support/wait-for';
import { runCliInProcess, testServerCliEnv, withProcessEnv } from '../support/cli-in-process';

/**
 * Issue 46, per-tool limits and the shared backoff, on the real dev server with workers that share a SQLite tool
 * limit store. Every limit is checked where it matters: at the downstream, by its own clock.
 */

const temporal = useTestTemporal();
const dir = mkdtempSync(join(tmpdir(), 'tool-limits-'));
let downstream: LimitsDownstream | undefined;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await downstream?.close();
  downstream = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A worker of this process running `limited_call`, its slots in the SQLite file `db`. */
async function limitsWorker(
  taskQueue: string,
  db: string,
  options: LimitedToolOptions,
  more: { slotLeaseMs?: number } = {},
): Promise<Worker> {
  const limitStore = new SqliteToolLimitStore({ path: db });
  const { worker, close } = await createWorker({
    stores: 'memory',
    warn: () => {},
    tools: [limitedCallTool(downstream!.url, options)],
    limitStore,
    ...more,
    connection: temporal.nativeConnection,
    workerOptions: { shutdownGraceTime: '1 second' },
    settings: { namespace: testServer().namespace, taskQueue },
    workflowBundle: { codePath: testServer().bundlePath },
  });
  const running = worker.run();
  cleanups.push(async () => {
    worker.shutdown();
    await running;
    await close();
    await limitStore.close();
  });
  return worker;
}

/**
 * A worker process running `limited_call` (test/support/limits-worker.ts), its slots in the SQLite file `db`: a
 * second worker (Temporal allows one worker per task queue in a process) or one the test kills.
 */
async function childWorker(
  taskQueue: string,
  db: string,
  settings: { concurrency?: string; perSecond?: string; slotLeaseMs?: string; label?: string },
): Promise<ChildProcess> {
  const name = `${taskQueue}-${Math.random().toString(36).slice(2)}`;
  const child = await spawnTestWorkerProcess(LIMITS_WORKER, taskQueue, {
    keysPath: join(dir, `${name}-keys.sqlite`),
    transcriptsPath: join(dir, `${name}-transcripts.sqlite`),
    url: downstream!.url,
    limitsDb: db,
    ...settings,
  });
  cleanups.push(() => (child.exitCode === null && child.signalCode === null ? killProcess(child) : Promise.resolve()));
  return child;
}

/** A run whose one turn calls `limited_call` for `account` `calls` times in parallel. */
function startCalls(taskQueue: string, account: string, calls: number) {
  const script: ScriptedTurn[] = [
    { toolCalls: Array.from({ length: calls }, (_, n) => ({ name: 'limited_call', arguments: { account, n } })) },
    { text: 'done', final: true },
  ];
  return startAgentRun(
    temporal.client,
    { goal: 'limits', model: { provider: 'scripted', script }, parallelToolCalls: true },
    { taskQueue },
  );
}

describe('per-tool limits across workers', () => {
  test('concurrency and rate limits hold at the downstream across two workers', async () => {
    downstream = await startLimitsDownstream(150);
    const taskQueue = uniqueTaskQueue('limits-two');
    const db = join(dir, 'two-workers.sqlite');
    const limits = { concurrency: 2, perSecond: 4 };
    await limitsWorker(taskQueue, db, { ...limits, label: 'w1' });
    await childWorker(taskQueue, db, { concurrency: '2', perSecond: '4', label: 'w2' });
    const handles = await Promise.all([1, 2, 3].map(() => startCalls(taskQueue, 'acct-a', 4)));
    const results = await Promise.all(handles.map((handle) => waitForAgentRun(handle)));
    expect(results.map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
    expect(results.flatMap((r) => r.steps.map((s) => s.observation?.status))).toEqual(Array(12).fill('ok'));
    expect(downstream.requests).toHaveLength(12);
    expect(new Set(downstream.requests.map((r) => r.worker))).toEqual(new Set(['w1', 'w2']));
    expect(downstream.concurrencyViolations(2)).toBe(0);
    expect(downstream.rateViolations(4, 1_000)).toBe(0);
  });

  test('a call waiting for a slot shows as waiting and its wait does not count against its attempt timeout', async () => {
    // Each call holds the downstream 1.2 s, one at a time: the fourth waits about 3.6 s, longer than its 3 s attempt.
    downstream = await startLimitsDownstream(1_200);
    const taskQueue = uniqueTaskQueue('limits-wait');
    await limitsWorker(taskQueue, join(dir, 'wait.sqlite'), { concurrency: 1, timeout: '3 seconds' });
    const handle = await startCalls(taskQueue, 'acct-w', 4);
    const waiting = await waitFor('a call waiting for its slot', async () =>
      (await runningCalls(temporal.client, handle.workflowId)).find((call) => call.waiting?.reason === 'concurrency'),
    );
    expect(waiting.waiting!.message).toMatch(/^waiting for a slot of limited_call \(key acct-w\) \(1 of 1 running\)/);
    const shown = await withProcessEnv(testServerCliEnv(dir), () => runCliInProcess(['show', handle.workflowId]));
    expect(shown.stdout).toContain('⏳ waiting for a slot of limited_call');
    const result = await waitForAgentRun(handle);
    expect(result.status).toBe('completed');
    expect(result.steps.map((s) => [s.observation?.status, s.attempts ?? 1])).toEqual(Array(4).fill(['ok', 1]));
    expect(downstream.concurrencyViolations(1)).toBe(0);
  });

  test('a 429 with Retry-After pauses the calls of every worker, then one probe goes first and the rest after it', async () => {
    downstream = await startLimitsDownstream(300);
    const taskQueue = uniqueTaskQueue('limits-429');
    const db = join(dir, 'breaker.sqlite');
    await limitsWorker(taskQueue, db, {});
    await childWorker(taskQueue, db, {});
    const order = downstream.answer429('acct-r', 2);
    const first = await startCalls(taskQueue, 'acct-r', 1);
    await waitFor('the 429', () => order.answeredAtMs !== undefined);
    const rest = await startCalls(taskQueue, 'acct-r', 4);
    const results = await Promise.all([waitForAgentRun(first), waitForAgentRun(rest)]);
    expect(results.map((r) => r.status)).toEqual(['completed', 'completed']);
    expect(downstream.requestsDuring(order)).toEqual([]);
    const after = downstream.requests.filter((r) => r.atMs > order.answeredAtMs!);
    expect(after).toHaveLength(5);
    const [probe, ...others] = after;
    for (const other of others) expect(other.atMs).toBeGreaterThanOrEqual(probe!.answeredAtMs!);
  });

  test('the slot of a killed worker is reclaimed after its lease, and the call runs on another worker', async () => {
    downstream = await startLimitsDownstream(100, { holdFirstMs: 600_000 });
    const taskQueue = uniqueTaskQueue('limits-kill');
    const db = join(dir, 'kill.sqlite');
    const child = await childWorker(taskQueue, db, { concurrency: '1', slotLeaseMs: '2000' });
    const handle = await startCalls(taskQueue, 'acct-k', 1);
    await waitFor('the first request, held by the downstream', () => downstream!.requests.length === 1);
    await killProcess(child);
    await limitsWorker(taskQueue, db, { concurrency: 1 });
    const result = await waitForAgentRun(handle);
    expect(result.status).toBe('completed');
    expect(result.steps[0]!.observation?.status).toBe('ok');
    expect(downstream.requests).toHaveLength(2);
  });
});
