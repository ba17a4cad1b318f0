import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import { startLedgerServer, type LedgerServer } from '../support/ledger-server';
import { RECORD_STEP_KIND, RESTART_WORKER } from '../support/restart-worker';
import { uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { killProcess, spawnTestWorkerProcess } from '../support/worker-process';

/**
 * Recovery after a crash (issue 23 part 3), with the default settings of `createWorker`: a worker process
 * SIGKILLed in the middle of a tool call (the effect is recorded downstream, the answer never reaches the tool)
 * and a worker started again on the same key store finish the step and the run, with one effect. The new
 * worker takes the key over through the dead-holder path (its process is gone), which it says in its log. How
 * fast is measured by `npm run bench:recovery`, never here.
 */

const temporal = useTestTemporal();
let ledger: LedgerServer;
beforeAll(async () => {
  ledger = await startLedgerServer();
});
afterAll(() => ledger.close());

test('a worker started after a SIGKILL in the middle of a tool call finishes the step, with one effect', async () => {
  const taskQueue = uniqueTaskQueue('kill-restart');
  const keysPath = join(mkdtempSync(join(tmpdir(), 'kill-restart-')), 'keys.sqlite');
  const settings = { ledgerUrl: ledger.url, keysPath, transcriptsPath: `${keysPath}.transcripts` };
  const first = await spawnTestWorkerProcess(RESTART_WORKER, taskQueue, settings);
  // The worker dies the moment the second step's effect is recorded, before the tool hears the answer.
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
  try {
    await waitUntil(() => killed !== undefined);
    await killed;
    stop();
    const second = await spawnTestWorkerProcess(RESTART_WORKER, taskQueue, settings);
    let secondOutput = '';
    for (const stream of [second.stdout, second.stderr]) {
      stream?.on('data', (chunk: Buffer) => (secondOutput += chunk.toString()));
    }
    try {
      const result = await waitForAgentRun(handle);

      expect(result.status).toBe('completed');
      expect(result.steps.map((s) => [s.tool, s.status])).toEqual([
        ['record_step', 'succeeded'],
        ['record_step', 'succeeded'],
        ['record_step', 'succeeded'],
      ]);
      const keys = ledger.effects.filter(
        (e) => e.kind === RECORD_STEP_KIND && e.key.startsWith(`${handle.workflowId}/`),
      );
      expect(keys.map((e) => e.amount)).toEqual([1, 2, 3]);
      // The key of step 2 was taken over from the killed process, as a dead holder (Linux only).
      if (process.platform === 'linux') {
        expect(secondOutput).toContain('Took the idempotency key over from a dead holder');
        expect(secondOutput).toContain(`holder=linux:`);
        expect(secondOutput).toContain(`:${first.pid}:`);
      }
    } finally {
      await killProcess(second);
    }
  } finally {
    stop();
  }
}, 600_000); // two worker starts on a possibly loaded machine (and the lease and grace where no holder is provably dead)

async function waitUntil(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 50));
}
