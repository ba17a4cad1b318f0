/**
 * Issue 44.1, "authority travels with the run", for a hand-made activity call on the real dev server: a workflow of
 * the test's own schedules the activity of `raw_effect` (restricted on this worker: only a run whose grant names it
 * calls it) with `proxyActivities`, past every gate of the engine. The worker is the engine's (`createWorker`); the
 * grants are in its audit store; effects are counted at a counting downstream.
 */
import { randomUUID } from 'node:crypto';
import { bundleWorkflowCode, type Worker } from '@temporalio/worker';
import { createWorker } from '../../src/runtime/create-worker';
import { MemoryAuditStore } from '../../src/stores/audit/memory-audit-store';
import { authorityTools } from '../support/authority-tools';
import { startCountingHttpServer, type CountingHttpServer } from '../support/counting-http-server';
import type { handMadeToolCall } from '../support/hand-made-call-workflow';
import { testServer, uniqueTaskQueue, useTestTemporal, type TestTemporal } from '../support/temporal-test-env';

const taskQueue = uniqueTaskQueue('authority-hand-made');
const store = new MemoryAuditStore();
let downstream: CountingHttpServer;
const temporal = useTestTemporal({ worker: engineWorker });

/** The engine's worker (`createWorker`) restricting `raw_effect`, with the test's own workflows bundled. */
async function engineWorker(t: TestTemporal): Promise<Worker> {
  downstream = await startCountingHttpServer(() => ({ status: 200, body: {} }));
  const code = await bundleWorkflowCode({ workflowsPath: require.resolve('../support/hand-made-call-workflow') });
  const { worker } = await createWorker({
    tools: authorityTools(downstream.url),
    connection: t.nativeConnection,
    settings: { namespace: testServer().namespace, taskQueue },
    workflowBundle: code,
    stores: 'memory',
    warn: () => {},
    auditStore: store,
    authority: { restrictedTools: ['raw_effect'] },
  });
  return worker;
}

afterAll(async () => {
  await downstream.close();
});

/** Runs the test's own workflow `workflowId`, which calls `raw_effect` by hand under `key` (default its own). */
function callByHand(workflowId: string, note: string, key?: string) {
  return temporal.client.workflow.execute<typeof handMadeToolCall>('handMadeToolCall', {
    taskQueue,
    workflowId,
    args: key ? ['raw_effect', { note }, key] : ['raw_effect', { note }],
  });
}

const effectsWith = (note: string) => downstream.calls.filter((c) => c.path.includes(`note=${note}`));

test("a restricted tool's activity called by hand from a workflow without a grant is refused with TOOL_NOT_PERMITTED and makes no effect", async () => {
  const outcome = await callByHand(`hand-made-${randomUUID()}`, 'no-grant');
  expect(outcome).toMatchObject({ ran: false, failureType: 'TOOL_NOT_PERMITTED', nonRetryable: true });
  expect(effectsWith('no-grant')).toEqual([]);
});

test("a call by hand under the key of a run whose grant names the tool is still refused: the grant is the scheduling run's", async () => {
  const granted = `granted-${randomUUID()}`;
  await store.recordGrant({ workflowId: granted, tools: ['raw_effect'], grantedAt: Date.now() });
  const outcome = await callByHand(`hand-made-${randomUUID()}`, 'borrowed', `${granted}/first-run/1`);
  expect(outcome).toMatchObject({ ran: false, failureType: 'TOOL_NOT_PERMITTED' });
  expect(effectsWith('borrowed')).toEqual([]);
});

test('the same call by hand runs once in a workflow whose trusted starter recorded a grant naming the tool', async () => {
  const workflowId = `hand-made-granted-${randomUUID()}`;
  await store.recordGrant({ workflowId, tools: ['raw_effect'], grantedAt: Date.now() });
  expect(await callByHand(workflowId, 'own-grant')).toMatchObject({ ran: true, output: { done: true } });
  expect(effectsWith('own-grant')).toHaveLength(1);
});
