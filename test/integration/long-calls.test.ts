import type { ChildProcess } from 'node:child_process';
import { spawnWorkerProcess } from '../support/worker-process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getAgentRunState, startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { SqliteIdempotencyStore } from '../../src/stores/idempotency/sqlite-idempotency-store';
import { SqliteTranscriptStore } from '../../src/stores/transcripts/sqlite-transcript-store';
import { createWorker } from '../../src/runtime/create-worker';
import type { AgentRunInput } from '../../src/contract/agent-run-types';
import { startCountingHttpServer, type CountingHttpServer } from '../support/counting-http-server';
import { createLongCallTools, UNIT_PATHS } from '../support/long-call-tools';
import { LONG_CALL_WORKER_ENV, LONG_CALL_WORKER_LEASE_MS, LONG_CALL_WORKER_READY } from '../support/long-call-worker';
import { useTestTemporal, testServer, uniqueTaskQueue } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

/**
 * Long tool calls (issue 16) on the real server: a tool that checkpoints after every unit survives a
 * SIGKILLed worker and resumes from its last checkpoint; its progress is in the run state; a cancelled run
 * stops it (at once, or after the unit in progress). The downstream counts every request.
 */

const WORKER_SCRIPT = join(__dirname, '..', 'support', 'long-call-worker.ts');

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

/** Starts the long-call worker in its own process; resolves once it polls. */
async function spawnWorker(taskQueue: string, keysPath: string, transcriptsPath: string): Promise<ChildProcess> {
  const env = LONG_CALL_WORKER_ENV;
  return spawnWorkerProcess(
    WORKER_SCRIPT,
    {
      [env.address]: testServer().address,
      [env.namespace]: testServer().namespace,
      [env.taskQueue]: taskQueue,
      [env.bundlePath]: testServer().bundlePath,
      [env.downstreamUrl]: downstream.url,
      [env.keysPath]: keysPath,
      [env.transcriptsPath]: transcriptsPath,
    },
    LONG_CALL_WORKER_READY,
  );
}

/** A worker in this process with the given SQLite stores (the same files a killed worker used). */
async function inProcessWorker(taskQueue: string, keysPath: string, transcriptsPath: string) {
  const idempotencyStore = new SqliteIdempotencyStore({ path: keysPath });
  const transcripts = new SqliteTranscriptStore({ path: transcriptsPath });
  const { worker } = await createWorker({
    tools: createLongCallTools(downstream.url),
    connection: temporal.nativeConnection,
    settings: { namespace: testServer().namespace, taskQueue },
    workflowBundle: { codePath: testServer().bundlePath },
    idempotencyStore,
    transcripts,
    leaseMs: LONG_CALL_WORKER_LEASE_MS,
  });
  return {
    worker,
    close: async () => {
      await idempotencyStore.close();
      await transcripts.close();
    },
  };
}

test('a long call SIGKILLed mid-way resumes from its last checkpoint on the next worker and finishes once', async () => {
  const taskQueue = uniqueTaskQueue('long-kill');
  const keysPath = join(workDir, 'kill-keys.sqlite');
  const transcriptsPath = join(workDir, 'kill-transcripts.sqlite');
  const units = 8;
  const first = await spawnWorker(taskQueue, keysPath, transcriptsPath);
  const handle = await startAgentRun(temporal.client, unitsRun('process_units', units, 1_000), { taskQueue });
  // The tool starts unit 3 only once its checkpoint `{ next: 3 }` is stored: from then on, a kill cannot take
  // the run back further than unit 3, however far the worker got before the signal lands.
  await waitFor('unit 3 started by the first worker', () => count(UNIT_PATHS.start(3)) > 0);
  const exited = new Promise((r) => first.once('exit', r));
  first.kill('SIGKILL');
  await exited;
  const committedBeforeKill = committedUnits(units);

  const { worker, close } = await inProcessWorker(taskQueue, keysPath, transcriptsPath);
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
  const { worker, close } = await inProcessWorker(
    taskQueue,
    join(workDir, 'progress-keys.sqlite'),
    join(workDir, 'progress-transcripts.sqlite'),
  );
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
  const taskQueue = uniqueTaskQueue('long-cancel');
  const { worker, close } = await inProcessWorker(
    taskQueue,
    join(workDir, 'cancel-keys.sqlite'),
    join(workDir, 'cancel-transcripts.sqlite'),
  );
  const result = await worker.runUntil(async () => {
    const handle = await startAgentRun(temporal.client, unitsRun('process_units', 20, 2_000), { taskQueue });
    await waitFor('a unit committed', () => requests('/commit/') >= 1);
    await handle.cancel();
    return waitForAgentRun(handle);
  });
  const settled = downstream.calls.length;
  await new Promise((r) => setTimeout(r, 3_000));
  await close();

  expect(result.status).toBe('cancelled');
  expect(result.steps[0]?.observation).toMatchObject({ status: 'error', code: 'CANCELLED' });
  expect(requests('/start/')).toBe(requests('/commit/') + 1);
  expect(downstream.calls.length).toBe(settled);
});

test('cancelling a run during a finish-unit long call lets the unit in progress finish, then stops', async () => {
  const taskQueue = uniqueTaskQueue('long-cancel-gently');
  const { worker, close } = await inProcessWorker(
    taskQueue,
    join(workDir, 'gentle-keys.sqlite'),
    join(workDir, 'gentle-transcripts.sqlite'),
  );
  const result = await worker.runUntil(async () => {
    const handle = await startAgentRun(temporal.client, unitsRun('process_units_gently', 20, 2_000), { taskQueue });
    await waitFor('a unit committed and the next started', () => requests('/start/') >= 2);
    await handle.cancel();
    return waitForAgentRun(handle);
  });
  const settled = downstream.calls.length;
  await new Promise((r) => setTimeout(r, 3_000));
  await close();

  expect(result.status).toBe('cancelled');
  expect(result.steps[0]?.observation).toMatchObject({ status: 'error', code: 'CANCELLED' });
  expect(requests('/commit/')).toBeGreaterThanOrEqual(2);
  expect(requests('/start/')).toBe(requests('/commit/'));
  expect(downstream.calls.length).toBe(settled);
});
