import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { approveStep, getPendingApprovals } from '../../src/client/approval-client';
import { startAgentRun, waitForAgentRun, type AgentRunHandle } from '../../src/client/agent-run-client';
import { callTurn, scriptedRun } from '../support/agent-runs';
import { startLedgerServer, type LedgerServer } from '../support/ledger-server';
import { createSqliteTestWorker, sqliteStoresIn } from '../support/sqlite-test-worker';
import { SUB_AGENT_WORKER, SUB_AGENT_WORKER_LEASE_MS } from '../support/sub-agent-worker';
import { subAgentTools } from '../support/sub-agent-tools';
import { uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';
import { killProcess, spawnTestWorkerProcess } from '../support/worker-process';

/**
 * Crash safety of sub-agents (issue 24, part 2): a worker process SIGKILLed while a child's tool call runs, or
 * while a child waits for approval, and a new worker on the same SQLite stores. Effects are counted at the test
 * ledger, which does not deduplicate.
 */

const temporal = useTestTemporal();
let ledger: LedgerServer;
let workDir: string;
/** When the ledger answers a booking: late, so the kill lands after the effect and before its result. */
let bookingAnswerDelayMs = 0;
/** One worker process per test, started together (starting one takes a while on a busy machine). */
const workers: Record<'midCall' | 'approval', { taskQueue: string; process?: ChildProcess }> = {
  midCall: { taskQueue: uniqueTaskQueue('sub-agent-kill-mid-call') },
  approval: { taskQueue: uniqueTaskQueue('sub-agent-kill-approval') },
};

beforeAll(async () => {
  ledger = await startLedgerServer({
    delayMs: ({ kind, phase }) => (kind === 'book' && phase === 'after' ? bookingAnswerDelayMs : 0),
  });
  workDir = mkdtempSync(join(tmpdir(), 'sub-agents-crash-'));
  await Promise.all(
    Object.values(workers).map(async (w) => {
      const stores = sqliteStoresIn(workDir, w.taskQueue);
      w.process = await spawnTestWorkerProcess(SUB_AGENT_WORKER, w.taskQueue, { ledgerUrl: ledger.url, ...stores });
    }),
  );
}, 120_000);
afterAll(async () => {
  for (const w of Object.values(workers)) if (w.process && w.process.exitCode === null) w.process.kill('SIGKILL');
  await ledger.close();
});

/** A worker in this process on the killed worker's task queue and SQLite stores. */
function nextWorker(taskQueue: string) {
  return createSqliteTestWorker(temporal, taskQueue, sqliteStoresIn(workDir, taskQueue), {
    tools: subAgentTools(ledger.url),
    leaseMs: SUB_AGENT_WORKER_LEASE_MS,
  });
}

async function runKey(handle: AgentRunHandle): Promise<string> {
  const description = await handle.describe();
  return `${handle.workflowId}/${description.raw.workflowExecutionInfo?.firstRunId || description.runId}`;
}

test("a worker SIGKILLed during a child's tool call, after its effect: the call's effect happens once", async () => {
  const { taskQueue, process: first } = workers.midCall;
  bookingAnswerDelayMs = 3_000;
  const booked = new Promise<void>((resolve) => {
    const off = ledger.onEvent((event) => {
      if (event.kind !== 'book' || event.phase !== 'recorded') return;
      off();
      resolve();
    });
  });
  const handle = await startAgentRun(
    temporal.client,
    scriptedRun('Book a flight to BER', [callTurn('flight_agent', { to: 'BER' }), { text: 'Booked.', final: true }]),
    { taskQueue },
  );
  await booked;
  await killProcess(first!);
  bookingAnswerDelayMs = 0;

  const { worker, close } = await nextWorker(taskQueue);
  const result = await worker.runUntil(waitForAgentRun(handle));
  await close();
  const key = await runKey(handle);

  expect(result.status).toBe('completed');
  expect(result.steps[0]?.observation).toMatchObject({ status: 'ok', output: { answer: 'Flight to BER booked.' } });
  expect(ledger.effects.filter((e) => e.key === `${key}/1/agent/1` && e.kind === 'book')).toHaveLength(1);
  expect(ledger.reconciles.found).toBeGreaterThanOrEqual(1);
});

test('a child waiting for approval survives a worker restart: decided through the parent, it runs its call once', async () => {
  const { taskQueue, process: first } = workers.approval;
  const handle = await startAgentRun(
    temporal.client,
    scriptedRun('Book a hotel in Rome', [callTurn('hotel_agent', { city: 'Rome' }), { text: 'Done.', final: true }]),
    { taskQueue },
  );
  const [pending] = await waitFor('the child call to wait for approval', async () => {
    const found = await getPendingApprovals(temporal.client, handle.workflowId);
    return found.length > 0 ? found : undefined;
  });
  await killProcess(first!);

  const { worker, close } = await nextWorker(taskQueue);
  const result = await worker.runUntil(async () => {
    // The new worker answers the queries of the parent and of its child: the same call still waits.
    const [again] = await getPendingApprovals(temporal.client, handle.workflowId);
    expect(again).toEqual(pending);
    await approveStep(temporal.client, pending!.workflowId, {
      stepId: pending!.stepId,
      digest: pending!.digest,
      approver: 'carol',
    });
    return waitForAgentRun(handle);
  });
  await close();
  const key = await runKey(handle);

  expect(result.status).toBe('completed');
  expect(ledger.effects.filter((e) => e.key === `${key}/1/agent/1` && e.kind === 'book')).toHaveLength(1);
  const childHistory = await temporal.client.workflow.getHandle(pending!.workflowId).fetchHistory();
  const accepted = (childHistory.events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
  expect(accepted).toHaveLength(1);
});
