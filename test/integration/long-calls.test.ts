import { killProcess, spawnTestWorkerProcess } from '../support/worker-process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getAgentRunState, startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import type { AgentRunInput } from '../../src/contract/agent-run-types';
import { startCountingHttpServer, type CountingHttpServer } from '../support/counting-http-server';
import { createLongCallTools, UNIT_PATHS } from '../support/long-call-tools';
import { LONG_CALL_WORKER, LONG_CALL_WORKER_LEASE_MS } from '../support/long-call-worker';
import { createSqliteTestWorker, sqliteStoresIn, type SqliteStorePaths } from '../support/sqlite-test-worker';
import { uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

/**
 * Long tool calls (issue 16) on the real server: a tool that checkpoints after every unit survives a
 * SIGKILLed worker and resumes from its last checkpoint; its progress is in the run state; a cancelled run
 * stops it (at once, or after the unit in progress). The downstream counts every request.
 */

const temporal = useTestTemporal();
let downstream: CountingHttpServer;
let workDir: string;
beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'long-calls-'));
});
beforeEach(async () => {
  downstream = await startCountingHttpServer(() => ({ status: 200, body: {} }));
});
afterEach(async () => {
  await downstream.close();
});

/** How many requests reached `path`. */
function count(path: string): number {
  return downstream.calls.filter((call) => call.path === path).length;
}

/** Units committed downstream for a run so far (each unit's commit counted once). */
function committedUnits(units: number): number {
  let done = 0;
  while (done < units && count(UNIT_PATHS.commit(done)) > 0) done += 1;
  return done;
}

function unitsRun(tool: string, units: number, unitMs: number): AgentRunInput {
  return {
    goal: 'process the batch',
    model: {
      provider: 'scripted',
      script: [{ toolCalls: [{ name: tool, arguments: { units, unitMs } }] }, { text: 'done', final: true }],
    },
  };
}

/** A worker in this process with the given SQLite stores (the same files a killed worker used). */
function inProcessWorker(taskQueue: string, stores: SqliteStorePaths) {
  return createSqliteTestWorker(temporal, taskQueue, stores, {
    tools: createLongCallTools(downstream.url),
    leaseMs: LONG_CALL_WORKER_LEASE_MS,
  });
}

/**
 * Runs `tool` over 20 units of 2 s on a worker in this process, cancels the run once `ready()` holds, waits
 * 3 s more and expects the run and its step ended cancelled: how many requests the downstream had when it ended.
 */
async function cancelDuringLongCall(name: string, tool: string, readiness: string, ready: () => boolean) {
  const taskQueue = uniqueTaskQueue(name);
  const { worker, close } = await inProcessWorker(taskQueue, sqliteStoresIn(workDir, name));
  const result = await worker.runUntil(async () => {
    const handle = await startAgentRun(temporal.client, unitsRun(tool, 20, 2_000), { taskQueue });
    await waitFor(readiness, ready);
    await handle.cancel();
    return waitForAgentRun(handle);
  });
  const settled = downstream.calls.length;
  await new Promise((r) => setTimeout(r, 3_000));
  await close();
  expect(result.status).toBe('cancelled');
  expect(result.steps[0]?.observation).toMatchObject({ status: 'error', code: 'CANCELLED' });
  return { settled };
}

test('a long call SIGKILLed mid-way resumes from its last checkpoint on the next worker and finishes once', async () => {
  const taskQueue = uniqueTaskQueue('long-kill');
  const stores = sqliteStoresIn(workDir, 'kill');
  const units = 8;
  const first = await spawnTestWorkerProcess(LONG_CALL_WORKER, taskQueue, { downstreamUrl: downstream.url, ...stores });
  const handle = await startAgentRun(temporal.client, unitsRun('process_units', units, 1_000), { taskQueue });
  // The tool starts unit 3 only once its checkpoint `{ next: 3 }` is stored: from then on, a kill cannot take
  // the run back further than unit 3, however far the worker got before the signal lands.
  await waitFor('unit 3 started by the first worker', () => count(UNIT_PATHS.start(3)) > 0);
  await killProcess(first);
  const committedBeforeKill = committedUnits(units);

  const { worker, close } = await inProcessWorker(taskQueue, stores);
  const result = await worker.runUntil(waitForAgentRun(handle));
  await close();

  expect(result.status).toBe('completed');
  const output = (result.steps[0]?.observation as { output?: { processed: number; resumedFrom: number } }).output;
  expect(output?.processed).toBe(units);
  // It resumed from the last checkpoint: at least the one stored before the kill, and at most one unit behind
  // the last commit (the worker may die between a unit's commit and its checkpoint).
  expect(output?.resumedFrom).toBeGreaterThanOrEqual(3);
  expect(output?.resumedFrom).toBeGreaterThanOrEqual(committedBeforeKill - 1);
  for (let unit = 0; unit < units; unit += 1) {
    // Every unit committed once, except the first one after the last checkpoint: the worker may have died
    // after committing it and before checkpointing it, so it ran again.
    const allowed = unit === output?.resumedFrom ? [1, 2] : [1];
    expect(allowed).toContain(count(UNIT_PATHS.commit(unit)));
  }
  const commits = downstream.calls.filter((call) => call.path.startsWith('/commit/')).length;
  expect(commits).toBeLessThanOrEqual(units + 1);
});

/** Requests whose path starts with `prefix`. */
function requests(prefix: string): number {
  return downstream.calls.filter((call) => call.path.startsWith(prefix)).length;
}

test('the latest progress of a running long call is in the run state', async () => {
  const taskQueue = uniqueTaskQueue('long-progress');
  const { worker, close } = await inProcessWorker(taskQueue, sqliteStoresIn(workDir, 'progress'));
  const result = await worker.runUntil(async () => {
    const handle = await startAgentRun(temporal.client, unitsRun('process_units', 6, 800), { taskQueue });
    const progress = await waitFor('progress of two units in the run state', async () => {
      const step = (await getAgentRunState(temporal.client, handle.workflowId)).steps[0];
      return step?.status === 'running' && (step.progress?.percent ?? 0) >= 33 ? step.progress : undefined;
    });
    expect(progress.message).toMatch(/^unit [2-6] of 6$/);
    expect(Date.parse(progress.at)).not.toBeNaN();
    return waitForAgentRun(handle);
  });
  await close();
  expect(result.status).toBe('completed');
  // A finished step carries its observation, not a stale progress.
  expect(result.steps[0]?.progress).toBeUndefined();
});

test('cancelling a run during a long call aborts the unit in progress and nothing runs after', async () => {
  const { settled } = await cancelDuringLongCall(
    'long-cancel',
    'process_units',
    'a unit committed',
    () => requests('/commit/') >= 1,
  );

  expect(requests('/start/')).toBe(requests('/commit/') + 1);
  expect(downstream.calls.length).toBe(settled);
});

test('cancelling a run during a finish-unit long call lets the unit in progress finish, then stops', async () => {
  const { settled } = await cancelDuringLongCall(
    'long-cancel-gently',
    'process_units_gently',
    'a unit committed and the next started',
    () => requests('/start/') >= 2,
  );

  expect(requests('/commit/')).toBeGreaterThanOrEqual(2);
  expect(requests('/start/')).toBe(requests('/commit/'));
  expect(downstream.calls.length).toBe(settled);
});
