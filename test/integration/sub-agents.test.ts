import {
  approveStep,
  getPendingApprovals,
  listPendingApprovals,
  type PendingApproval,
} from '../../src/client/approval-client';
import { startAgentRun, waitForAgentRun, type AgentRunHandle } from '../../src/client/agent-run-client';
import type { AgentRunInput, AgentRunResult } from '../../src/contract/agent-run-types';
import type { SubAgentOutput } from '../../src/contract/sub-agent-spec';
import { callTurn, scriptedRun } from '../support/agent-runs';
import { startLedgerServer, type LedgerServer } from '../support/ledger-server';
import { runKeyOf } from '../support/run-key';
import { localActivities } from '../support/history-markers';
import { FAST_PATH_LIMITS } from '../../src/contract/fast-path';
import { subAgentTools } from '../support/sub-agent-tools';
import { createTestWorker, testServer, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';
import { runCliToEnd } from '../support/cli-process';
import { join } from 'node:path';
import { tmpdir } from 'node:os';

/**
 * Sub-agents (issue 24, part 2) on the real dev server: agent tools run as child workflows of the run that calls
 * them. Effects are counted at the test ledger, which does not deduplicate.
 */

let ledger: LedgerServer;
const taskQueue = uniqueTaskQueue('sub-agents');
const temporal = useTestTemporal({
  worker: async (connected) => {
    ledger = await startLedgerServer();
    return createTestWorker(connected, { tools: subAgentTools(ledger.url), taskQueue });
  },
});
afterAll(() => ledger.close());

function start(input: AgentRunInput): Promise<AgentRunHandle> {
  return startAgentRun(temporal.client, input, { taskQueue });
}

/** The approvals waiting in `handle`'s run and its sub-agents, once there is one (`what` names it if none comes). */
function waitForPendingUnder(handle: AgentRunHandle, what: string): Promise<PendingApproval[]> {
  return waitFor(what, async () => {
    const found = await getPendingApprovals(temporal.client, handle.workflowId);
    return found.length > 0 ? found : undefined;
  });
}

function outputOf(result: AgentRunResult, stepId: number): SubAgentOutput {
  const observation = result.steps.find((step) => step.stepId === stepId)?.observation;
  if (observation?.status !== 'ok') throw new Error(`step ${stepId} did not succeed: ${JSON.stringify(observation)}`);
  return observation.output as SubAgentOutput;
}

function effectsUnder(prefix: string, kind: string) {
  return ledger.effects.filter((effect) => effect.key.startsWith(prefix) && effect.kind === kind);
}

/** The ledger's effects of `kind` recorded under exactly `key` (undefined: a key that never came). */
function effectsAt(key: string | undefined, kind: string) {
  return ledger.effects.filter((effect) => effect.key === key && effect.kind === kind);
}

test('a parent with two children completes: each answer is its call output, and each child is a child workflow of the parent', async () => {
  const handle = await start(
    scriptedRun('Book flights to BER and LIS', [
      callTurn('flight_agent', { to: 'BER' }),
      callTurn('flight_agent', { to: 'LIS' }),
      { text: 'Both booked.', final: true },
    ]),
  );
  const result = await waitForAgentRun(handle);
  const key = await runKeyOf(handle);

  expect(result.status).toBe('completed');
  expect([outputOf(result, 1).answer, outputOf(result, 2).answer]).toEqual([
    'Flight to BER booked.',
    'Flight to LIS booked.',
  ]);
  expect(result.subAgentSteps).toBe(2);
  for (const stepId of [1, 2]) {
    const childId = outputOf(result, stepId).childWorkflowId;
    expect(childId).toBe(`${key}/${stepId}/flight_agent`);
    const child = await temporal.client.workflow.getHandle(childId).describe();
    expect(child.parentExecution?.workflowId).toBe(handle.workflowId);
    expect(child.status.name).toBe('COMPLETED');
    // The child's keys live under its parent's call key.
    expect(effectsUnder(`${key}/${stepId}/agent/`, 'book')).toHaveLength(1);
  }
});

test("a child takes its parent's fast path: the default's, with its 4 s workflow task timeout, or the parent's fastPath: false", async () => {
  const childOf = async (more: Omit<AgentRunInput, 'goal' | 'model'>) => {
    const handle = await start(
      scriptedRun(
        'Book a flight to OSL',
        [callTurn('flight_agent', { to: 'OSL' }), { text: 'Booked.', final: true }],
        more,
      ),
    );
    const result = await waitForAgentRun(handle);
    expect(result.status).toBe('completed');
    const child = temporal.client.workflow.getHandle(outputOf(result, 1).childWorkflowId);
    const events = (await child.fetchHistory()).events ?? [];
    const { raw } = await child.describe();
    return {
      local: localActivities(events).map((a) => a.type),
      scheduled: events.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean),
      taskTimeoutSeconds: Number(raw.executionConfig?.defaultWorkflowTaskTimeout?.seconds),
    };
  };
  const fast = await childOf({});
  expect(fast.local).toContain('book_flight');
  expect(fast.scheduled).not.toContain('book_flight');
  expect(fast.taskTimeoutSeconds).toBe(FAST_PATH_LIMITS.workflowTaskTimeoutMs / 1000);

  const regular = await childOf({ fastPath: false });
  expect(regular.local).toEqual([]);
  expect(regular.scheduled).toEqual(expect.arrayContaining(['describeTools', 'callModel', 'book_flight']));
  expect(regular.taskTimeoutSeconds).toBe(10);
});

test("a child's waiting call is listed through its parent, with the child's step, and deciding it finishes both", async () => {
  const handle = await start(
    scriptedRun('Book a hotel in Paris', [callTurn('hotel_agent', { city: 'Paris' }), { text: 'Done.', final: true }]),
  );
  const [pending] = await waitForPendingUnder(handle, 'the child call to wait for approval');
  const key = await runKeyOf(handle);

  expect(pending).toMatchObject({
    workflowId: `${key}/1/hotel_agent`,
    stepId: 1,
    tool: 'book_hotel',
    arguments: { city: 'Paris' },
    parent: { workflowId: handle.workflowId, stepId: 1 },
  });
  await approveStep(temporal.client, pending!.workflowId, {
    stepId: pending!.stepId,
    digest: pending!.digest,
    approver: 'alice',
  });
  const result = await waitForAgentRun(handle);
  expect(result.status).toBe('completed');
  expect(outputOf(result, 1).answer).toBe('Hotel in Paris booked.');
  expect(effectsUnder(`${key}/1/agent/`, 'book')).toHaveLength(1);
});

test("`durable-tools approve <parent>` without a step decides the child's waiting call, sent to the child", async () => {
  const handle = await start(
    scriptedRun('Book a hotel in Kyiv', [callTurn('hotel_agent', { city: 'Kyiv' }), { text: 'Done.', final: true }]),
  );
  const [pending] = await waitForPendingUnder(handle, 'the child call to wait for approval');
  const env: NodeJS.ProcessEnv = {
    TEMPORAL_ADDRESS: testServer().address,
    TEMPORAL_NAMESPACE: testServer().namespace,
    TEMPORAL_CONFIG_FILE: join(tmpdir(), 'no-temporal.toml'),
  };

  const approve = await runCliToEnd(['approve', handle.workflowId, '--approver', 'dave', '--yes'], env);

  expect(approve.stdout).toContain(`run       ${pending!.workflowId}`);
  expect(approve.stdout).toContain('Approved by dave: step 1 (book_hotel)');
  expect(approve.code).toBe(0);
  expect((await waitForAgentRun(handle)).status).toBe('completed');
});

test("the list of pending approvals (the search attribute) shows a child's waiting call once, with its parent", async () => {
  const handle = await start(
    scriptedRun('Book a hotel in Oslo', [callTurn('hotel_agent', { city: 'Oslo' }), { text: 'Done.', final: true }]),
  );
  const listed = await waitFor('the child call in the list', async () => {
    const all = await listPendingApprovals(temporal.client, { taskQueue });
    const mine = all.filter((p) => p.parent?.workflowId === handle.workflowId);
    return mine.length > 0 ? mine : undefined;
  });
  expect(listed.map((p) => [p.tool, p.stepId, p.parent])).toEqual([
    ['book_hotel', 1, { workflowId: handle.workflowId, stepId: 1 }],
  ]);
  const ofTheRun = await listPendingApprovals(temporal.client, { rootWorkflowId: handle.workflowId });
  expect(ofTheRun).toEqual(listed);
  await handle.cancel();
  await waitForAgentRun(handle);
});

test("a cancelled parent cancels its waiting child and undoes a completed child's effect exactly once", async () => {
  const handle = await start(
    scriptedRun('Book a flight to BER and a hotel in Rome', [
      callTurn('flight_agent', { to: 'BER' }),
      callTurn('hotel_agent', { city: 'Rome' }),
      { text: 'Done.', final: true },
    ]),
  );
  const [pending] = await waitForPendingUnder(handle, 'the hotel child to wait for approval');
  await handle.cancel();
  const result = await waitForAgentRun(handle);
  const key = await runKeyOf(handle);

  expect(result.status).toBe('cancelled');
  const [booking] = effectsUnder(`${key}/1/agent/`, 'book');
  expect(booking).toBeDefined();
  expect(effectsAt(booking!.key, 'cancel')).toHaveLength(1);
  expect(result.steps[0]).toMatchObject({ tool: 'flight_agent', status: 'compensated' });
  expect(effectsUnder(`${key}/2/agent/`, 'book')).toHaveLength(0);
  const child = await temporal.client.workflow.getHandle(pending!.workflowId).describe();
  expect(child.status.name).toBe('CANCELLED');
});

test('a cancelled parent cancels its running child, which undoes its own effect exactly once', async () => {
  const handle = await start(
    scriptedRun('Plan a trip to Rome', [callTurn('trip_agent', { city: 'Rome' }), { text: 'Done.', final: true }]),
  );
  const [pending] = await waitForPendingUnder(handle, 'the child to wait for approval of its hotel');
  await handle.cancel();
  const result = await waitForAgentRun(handle);
  const key = await runKeyOf(handle);

  expect(result.status).toBe('cancelled');
  const [flight] = effectsUnder(`${key}/1/agent/`, 'book');
  expect(flight?.key).toBe(`${key}/1/agent/1`);
  expect(effectsAt(flight!.key, 'cancel')).toHaveLength(1);
  const child = await temporal.client.workflow.getHandle(pending!.workflowId).describe();
  expect(child.status.name).toBe('CANCELLED');
});

test('a terminated parent has its running child cancelled by the server (parent close policy), which undoes its effect', async () => {
  const handle = await start(
    scriptedRun('Plan a trip to Oslo', [callTurn('trip_agent', { city: 'Oslo' }), { text: 'Done.', final: true }]),
  );
  const [pending] = await waitForPendingUnder(handle, 'the child to wait for approval of its hotel');
  await handle.terminate('test: the parent is terminated');
  const key = await runKeyOf(handle);

  const child = temporal.client.workflow.getHandle(pending!.workflowId);
  await waitFor('the child to end cancelled', async () => (await child.describe()).status.name === 'CANCELLED');
  expect(effectsAt(`${key}/1/agent/1`, 'cancel')).toHaveLength(1);
});

test('agents nest: a grandchild waiting for approval is listed from the root, with its own parent', async () => {
  const handle = await start(
    scriptedRun('Plan a stay in Lyon', [callTurn('planner_agent', { city: 'Lyon' }), { text: 'Done.', final: true }]),
  );
  const [pending] = await waitForPendingUnder(handle, 'the grandchild call to wait for approval');
  const key = await runKeyOf(handle);
  const childId = `${key}/1/planner_agent`;

  expect(pending).toMatchObject({ tool: 'book_hotel', parent: { workflowId: childId, stepId: 1 } });
  // The grandchild's id derives from its call's key, which is under the root's call key.
  expect(pending!.workflowId).toBe(`${key}/1/agent/1/hotel_agent`);
  await approveStep(temporal.client, pending!.workflowId, { stepId: 1, digest: pending!.digest, approver: 'erin' });
  const result = await waitForAgentRun(handle);
  expect(result.status).toBe('completed');
  expect(outputOf(result, 1)).toMatchObject({ answer: 'Stay in Lyon planned.', steps: 2 });
  expect(result.subAgentSteps).toBe(2);
  expect(effectsUnder(`${key}/1/agent/`, 'book').map((e) => e.key.slice(key.length))).toEqual([
    expect.stringMatching(/^\/1\/agent\/1\/agent\/1$/),
  ]);
});

test("a parent that aborts undoes its children's effects newest first", async () => {
  const handle = await start(
    scriptedRun(
      'Book flights, then fail',
      [
        callTurn('flight_agent', { to: 'BER' }),
        callTurn('flight_agent', { to: 'LIS' }),
        callTurn('no_such_tool'),
        { text: 'Never reached.', final: true },
      ],
      { failurePolicy: { criticalTools: ['no_such_tool'] } },
    ),
  );
  const result = await waitForAgentRun(handle);
  const key = await runKeyOf(handle);

  expect(result.status).toBe('compensated');
  const cancels = ledger.effects.filter((e) => e.key.startsWith(`${key}/`) && e.kind === 'cancel');
  expect(cancels.map((e) => e.key.slice(key.length))).toEqual(['/2/agent/1', '/1/agent/1']);
});

test("a child's compensation handed to its parent is carried across the parent's continue-as-new", async () => {
  const handle = await start(
    scriptedRun(
      'Book a flight, continue as new, then fail',
      [callTurn('flight_agent', { to: 'BER' }), callTurn('no_such_tool'), { text: 'Never reached.', final: true }],
      { continueAsNewAfterSteps: 1, failurePolicy: { criticalTools: ['no_such_tool'] } },
    ),
  );
  const result = await waitForAgentRun(handle);
  const key = await runKeyOf(handle);

  expect(result).toMatchObject({ status: 'compensated', generation: 1, subAgentSteps: 1 });
  expect(effectsAt(`${key}/1/agent/1`, 'cancel')).toHaveLength(1);
});

test('a child that does not complete is a SUB_AGENT_FAILED observation, and it undid its own effect', async () => {
  const handle = await start(
    scriptedRun('Try the broken agent', [callTurn('broken_agent', { to: 'NYC' }), { text: 'It failed.', final: true }]),
  );
  const result = await waitForAgentRun(handle);
  const key = await runKeyOf(handle);

  expect(result.status).toBe('completed');
  expect(result.steps[0]?.observation).toMatchObject({ status: 'error', code: 'SUB_AGENT_FAILED' });
  expect(result.steps[0]?.observation).toMatchObject({ message: expect.stringContaining('compensated') });
  const [booking] = effectsUnder(`${key}/1/agent/`, 'book');
  expect(effectsAt(booking?.key, 'cancel')).toHaveLength(1);
  expect(result.subAgentSteps).toBe(2);
});

test("a handoff ends the parent with the child's answer, and the child was given the conversation", async () => {
  const handle = await start(
    scriptedRun('Where is my invoice INV-7?', [
      {
        text: 'Transferring you to billing.',
        toolCalls: [{ name: 'billing_handoff', arguments: { summary: 'INV-7' } }],
      },
      { text: 'Never reached.', final: true },
    ]),
  );
  const result = await waitForAgentRun(handle);

  expect(result.status).toBe('completed');
  expect(result.answer).toBe('Billing: your invoice INV-7 is paid.');
  expect(result.turns).toBe(1);
  const child = (await temporal.client.workflow
    .getHandle(outputOf(result, 1).childWorkflowId)
    .result()) as AgentRunResult;
  expect(child.goal).toContain('The triage agent says: INV-7');
  expect(child.goal).toContain('User: Where is my invoice INV-7?');
  expect(child.goal).toContain('Assistant: Transferring you to billing.');
});

test("a child's limits are carved out of the parent's remaining tool calls", async () => {
  const handle = await start(
    scriptedRun(
      'Book a flight with little budget',
      [callTurn('flight_agent', { to: 'BER' }), { text: 'Done.', final: true }],
      { limits: { maxSteps: 1 } },
    ),
  );
  const result = await waitForAgentRun(handle);

  expect(result.steps[0]?.observation).toMatchObject({
    status: 'error',
    code: 'SUB_AGENT_FAILED',
    message: expect.stringContaining('tool calls (1)'),
  });
});

test('an agent tool whose spec is too large to carry starts no child: a SUB_AGENT_FAILED observation', async () => {
  const handle = await start(
    scriptedRun('Echo a lot', [callTurn('echo_agent', { text: '€'.repeat(30_000) }), { text: 'Done.', final: true }]),
  );
  const result = await waitForAgentRun(handle);

  expect(result.steps[0]).toMatchObject({
    observation: { status: 'error', code: 'SUB_AGENT_FAILED', message: expect.stringContaining('too large') },
  });
  expect(result.steps[0]?.childWorkflowId).toBeUndefined();
});
