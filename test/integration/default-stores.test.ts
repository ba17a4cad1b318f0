import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import { DEFAULT_STORES_WORKER } from '../support/default-stores-worker';
import { startLedgerServer, type LedgerServer } from '../support/ledger-server';
import { RECORD_STEP_KIND } from '../support/restart-worker';
import { uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { killProcess, spawnTestWorkerProcess } from '../support/worker-process';

/**
 * `createWorker({ tools })` with no store option keeps its idempotency keys in SQLite (issue 43, "safe defaults"):
 * a worker process SIGKILLed in the middle of a call with effects, and a new process started with the same
 * options, finish the run with one effect per step — the new process finds the key the killed one claimed. On
 * memory stores the new process would run the step again (a second effect at the ledger).
 */

const temporal = useTestTemporal();
let ledger: LedgerServer;
beforeAll(async () => {
  ledger = await startLedgerServer();
});
afterAll(() => ledger.close());

test('a worker created without store options keeps its keys across a process restart: one effect per step', async () => {
  const taskQueue = uniqueTaskQueue('default-stores');
  const dir = mkdtempSync(join(tmpdir(), 'default-stores-'));
  // The defaults' own configuration (the files `.data/*.sqlite` would be), moved out of the repository.
  const env = {
    DURABLE_TOOLS_SQLITE_PATH: join(dir, 'idempotency.sqlite'),
    DURABLE_TOOLS_TRANSCRIPT_SQLITE_PATH: join(dir, 'transcripts.sqlite'),
    DURABLE_TOOLS_AUDIT_SQLITE_PATH: join(dir, 'audit.sqlite'),
  };
  const settings = { ledgerUrl: ledger.url };
  const first = await spawnTestWorkerProcess(DEFAULT_STORES_WORKER, taskQueue, settings, env);
  let killed: Promise<void> | undefined;
  const stop = ledger.onEvent((event) => {
    if (event.phase === 'recorded' && event.key.endsWith('/2') && !killed) killed = killProcess(first);
  });
  const script: ScriptedTurn[] = [1, 2, 3].map((step) => ({
    toolCalls: [{ name: 'record_step', arguments: { step } }],
  }));
  const handle = await startAgentRun(
    temporal.client,
    { goal: 'three steps', model: { provider: 'scripted', script, finalText: 'done' } },
    { taskQueue },
  );
  let second: ChildProcess | undefined;
  try {
    while (killed === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    await killed;
    second = await spawnTestWorkerProcess(DEFAULT_STORES_WORKER, taskQueue, settings, env);
    const result = await waitForAgentRun(handle);
    const effects = ledger.effects.filter(
      (e) => e.kind === RECORD_STEP_KIND && e.key.startsWith(`${handle.workflowId}/`),
    );

    expect(result.status).toBe('completed');
    expect(effects.map((e) => e.amount)).toEqual([1, 2, 3]);
    expect(existsSync(env.DURABLE_TOOLS_SQLITE_PATH)).toBe(true);
  } finally {
    stop();
    if (second) await killProcess(second);
    if (first.exitCode === null && first.signalCode === null) await killProcess(first);
  }
}, 600_000); // two worker starts on a possibly loaded machine
