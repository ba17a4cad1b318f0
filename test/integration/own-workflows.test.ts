import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { bundleWorkflowCode } from '@temporalio/worker';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getPendingApprovals, rejectStep, type PendingApproval } from '../../src/client/approval-client';
import { TOOL_ERROR_CODES } from '../../src/contract/activity-protocol';
import { toolFailureOf } from '../../src/contract/tool-call-failure';
import { SAGA_COMPENSATION_FAILED } from '../../src/workflows/saga-scope';
import { createWorker } from '../../src/runtime/create-worker';
import { engineBundleOptions } from '../../src/runtime/engine-bundle-options';
import { SqliteAuditStore } from '../../src/stores/audit/sqlite-audit-store';
import { runCliInProcess, testServerCliEnv, useProcessEnv } from '../support/cli-in-process';
import { createOwnWorkflowTools } from '../support/own-workflow-tools';
import {
  agentThenNotice,
  boundedAgent,
  conciergeAgent,
  continuingCalls,
  failingCall,
  gatedNotice,
  goSignal,
  sagaUntilCancelled,
  sagaWithFailingUndo,
  tripPipeline,
} from '../support/own-workflows';
import { testServer, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

/*
 * durable-tools/workflow on the real dev server: a user's own workflows (test/support/own-workflows.ts, which
 * import only the workflow entry) on a worker whose bundle holds them and the engine's agentRun. Effects are
 * counted where the tools run.
 */

const { tools, effects } = createOwnWorkflowTools();
const taskQueue = uniqueTaskQueue('own-workflows');
const stateDir = mkdtempSync(join(tmpdir(), 'own-workflows-'));
const auditStore = new SqliteAuditStore({ path: join(stateDir, 'audit.sqlite') });
const silent = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

const temporal = useTestTemporal({
  worker: async (connected) => {
    const { code } = await bundleWorkflowCode({
      workflowsPath: require.resolve('../support/own-workflows'),
      ...engineBundleOptions(),
      logger: silent,
    });
    const { worker } = await createWorker({
      tools: Object.values(tools),
      connection: connected.nativeConnection,
      settings: { namespace: testServer().namespace, taskQueue },
      workflowBundle: { code },
      auditStore,
    });
    return worker;
  },
});

afterAll(() => auditStore.close());

const start = <A extends unknown[], R>(workflow: (...args: A) => Promise<R>, ...args: A) =>
  temporal.client.workflow.start(workflow, {
    taskQueue,
    workflowId: `${workflow.name}-${Math.random().toString(36).slice(2, 10)}`,
    args,
  });

const effectsUnder = (runKey: string) => effects.filter((effect) => effect.key.startsWith(`${runKey}/`));

describe('a pipeline in a saga', () => {
  it('returns the typed outputs of its calls when every call succeeds, and undoes nothing', async () => {
    const handle = await start(tripPipeline, { city: 'Bern', agencyOpen: true });
    const outcome = await handle.result();
    const runKey = `${handle.workflowId}/${handle.firstExecutionRunId}`;
    expect(outcome).toEqual({
      bookingId: 'room-Bern-2',
      chargeId: 'charge-room-Bern-2',
      confirmation: 'confirmed-room-Bern-2',
    });
    expect(effectsUnder(runKey).map((e) => [e.tool, e.key])).toEqual([
      ['reserve_room', `${runKey}/1`],
      ['charge_card', `${runKey}/2`],
      ['confirm_trip', `${runKey}/3`],
    ]);
  });

  it('undoes the first two calls, newest first, when the third fails permanently, then fails with its failure', async () => {
    const handle = await start(tripPipeline, { city: 'Oslo', agencyOpen: false });
    const failure = await handle.result().then(
      () => undefined,
      (error: unknown) => error,
    );
    const runKey = `${handle.workflowId}/${handle.firstExecutionRunId}`;
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect(toolFailureOf(failure)).toMatchObject({
      code: TOOL_ERROR_CODES.CONFLICT,
      hint: 'Confirm the trip tomorrow.',
    });
    expect(effectsUnder(runKey).map((e) => [e.tool, e.key, e.subject])).toEqual([
      ['reserve_room', `${runKey}/1`, 'Oslo'],
      ['charge_card', `${runKey}/2`, 'room-Oslo-2'],
      ['refund_card', `${runKey}/2/undo`, `${runKey}/2`],
      ['cancel_room', `${runKey}/1/undo`, `${runKey}/1`],
    ]);
  });
});

describe('a saga whose undo fails', () => {
  it('still runs the other undos, then fails COMPENSATION_FAILED naming the undo, with the original failure as cause', async () => {
    const handle = await start(sagaWithFailingUndo, { city: 'Rome' });
    const runKey = `${handle.workflowId}/${handle.firstExecutionRunId}`;
    const failure = (await handle.result().then(
      () => undefined,
      (error: unknown) => error,
    )) as WorkflowFailedError;
    const cause = failure.cause as ApplicationFailure;
    expect(cause.type).toBe(SAGA_COMPENSATION_FAILED);
    expect(cause.details).toEqual([
      { compensated: 1, failed: [{ of: 'ledger entry', error: expect.stringContaining('the ledger is read-only') }] },
    ]);
    expect(toolFailureOf(failure)).toMatchObject({ code: TOOL_ERROR_CODES.CONFLICT });
    expect(effectsUnder(runKey).map((e) => e.tool)).toEqual(['reserve_room', 'cancel_room']);
  });
});

describe('a call that fails', () => {
  it('throws a ToolCallFailure carrying the observation: code, message, hint, retryable', async () => {
    const handle = await start(failingCall, { catchIt: true });
    const caught = await handle.result();
    expect(caught).toMatchObject({
      isToolCallFailure: true,
      tool: 'confirm_trip',
      idempotencyKey: `${handle.workflowId}/${handle.firstExecutionRunId}/1`,
      type: TOOL_ERROR_CODES.CONFLICT,
      observation: {
        status: 'error',
        code: TOOL_ERROR_CODES.CONFLICT,
        message: 'The agency is closed today.',
        hint: 'Confirm the trip tomorrow.',
        retryable: false,
      },
    });
  });

  it('fails the workflow with the code as its type when uncaught, and the client reads the observation back', async () => {
    const handle = await start(failingCall, { catchIt: false });
    const failure = await handle.result().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect((failure as WorkflowFailedError).cause).toBeInstanceOf(ApplicationFailure);
    expect(((failure as WorkflowFailedError).cause as ApplicationFailure).type).toBe(TOOL_ERROR_CODES.CONFLICT);
    expect(toolFailureOf(failure)).toMatchObject({ code: TOOL_ERROR_CODES.CONFLICT, retryable: false });
  });
});

describe('call keys', () => {
  it('are new after continue-as-new: a continued run never reaches the keys of the run before it', async () => {
    const handle = await start(continuingCalls, { keys: [] });
    const { keys } = await handle.result();
    const runKey = `${handle.workflowId}/${handle.firstExecutionRunId}`;
    expect(keys).toHaveLength(4);
    expect(new Set(keys).size).toBe(4);
    expect(keys.slice(0, 2)).toEqual([`${runKey}/1`, `${runKey}/2`]);
    for (const key of keys.slice(2)) expect(key).toMatch(new RegExp(`^${runKey}/[0-9a-f-]{36}/[12]$`));
  });

  it('are new when the workflow id is used again', async () => {
    const first = await start(continuingCalls, { keys: ['given'] });
    const { keys: firstKeys } = await first.result();
    const again = await temporal.client.workflow.start(continuingCalls, {
      taskQueue,
      workflowId: first.workflowId,
      args: [{ keys: ['given'] }],
    });
    const { keys: againKeys } = await again.result();
    expect(againKeys.slice(1).filter((key) => firstKeys.includes(key))).toEqual([]);
  });
});

describe('an agent inside the workflow', () => {
  it('waits for the workflow’s own signal, then runs its tool calls under the workflow’s keys and completes', async () => {
    const handle = await start(conciergeAgent, {
      script: [{ toolCalls: [{ name: 'stamp_key', arguments: { note: 'agent' } }] }, { text: 'Done.', final: true }],
    });
    const runKey = `${handle.workflowId}/${handle.firstExecutionRunId}`;
    await waitFor('the workflow to wait for its signal', async () => {
      const { events } = await handle.fetchHistory();
      return events?.some((event) => event.workflowTaskCompletedEventAttributes) === true;
    });
    expect(effectsUnder(runKey)).toEqual([]);
    await handle.signal(goSignal, 'Stamp a key.');
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', answer: 'Done.', goal: 'Stamp a key.', stepCount: 1 });
    expect(effectsUnder(runKey).map((e) => e.key)).toEqual([`${runKey}/1/agent/1`]);
  });
});

describe('an agent inside the workflow, when the workflow’s history would need continuing as new', () => {
  it('ends failed, saying why, and the workflow does not continue as new', async () => {
    const handle = await start(boundedAgent);
    const result = await handle.result();
    expect(result.status).toBe('failed');
    expect(result.reason).toContain('never continues its workflow as new');
    expect(result.stepCount).toBeLessThan(40);
    const latest = await temporal.client.workflow.getHandle(handle.workflowId).describe();
    expect(latest.runId).toBe(handle.firstExecutionRunId);
  });
});

describe('a gated tool called from the workflow', () => {
  useProcessEnv(testServerCliEnv(stateDir));

  it('waits for a decision, then runs once after `durable-tools approve`', async () => {
    const handle = await start(gatedNotice, { to: 'ada@example.com' });
    const runKey = `${handle.workflowId}/${handle.firstExecutionRunId}`;
    const [pending] = await waitFor('the call to wait for approval', async () => {
      const calls = await getPendingApprovals(temporal.client, handle.workflowId);
      return calls.length > 0 ? calls : undefined;
    });
    expect(pending).toMatchObject({ stepId: 1, tool: 'send_notice', arguments: { to: 'ada@example.com' } });
    expect(effectsUnder(runKey)).toEqual([]);

    const approved = await runCliInProcess(['approve', handle.workflowId, '1', '--approver', 'alice', '--yes']);
    expect(approved.stderr).toBe('');
    expect(approved.code).toBe(0);

    expect(await handle.result()).toEqual({ sent: true });
    expect(effectsUnder(runKey).map((e) => [e.tool, e.key])).toEqual([['send_notice', `${runKey}/1`]]);
    expect(await auditStore.get(`${runKey}/1`)).toMatchObject({
      tool: 'send_notice',
      decision: 'approved',
      decidedBy: 'alice',
      argumentsDigest: pending!.digest,
      outcome: 'succeeded',
    });
  });
});

describe('a saga when the workflow is cancelled', () => {
  it('runs the undos owed, the user’s own among them, newest first, and the workflow ends cancelled', async () => {
    const handle = await start(sagaUntilCancelled, { city: 'Lima' });
    const runKey = `${handle.workflowId}/${handle.firstExecutionRunId}`;
    await waitFor('the room to be reserved', () => effectsUnder(runKey).length === 1);
    await handle.cancel();
    const failure = await handle.result().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect((failure as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    expect(effectsUnder(runKey).map((e) => [e.tool, e.subject])).toEqual([
      ['reserve_room', 'Lima'],
      ['stamp_key', 'own undo Lima'],
      ['cancel_room', `${runKey}/1`],
    ]);
  });
});

/** The calls of a workflow waiting for a decision, once there is at least one. */
const pendingOf = (workflowId: string): Promise<PendingApproval[]> =>
  waitFor(`a call of ${workflowId} to wait for approval`, async () => {
    const calls = await getPendingApprovals(temporal.client, workflowId);
    return calls.length > 0 ? calls : undefined;
  });

describe('a gated call that is rejected', () => {
  it('does not run, and throws a ToolCallFailure APPROVAL_REJECTED with the reason', async () => {
    const handle = await start(gatedNotice, { to: 'bob@example.com' });
    const runKey = `${handle.workflowId}/${handle.firstExecutionRunId}`;
    const [pending] = await pendingOf(handle.workflowId);
    await rejectStep(temporal.client, handle.workflowId, {
      stepId: pending!.stepId,
      digest: pending!.digest,
      approver: 'carol',
      reason: 'Not this guest.',
    });
    const failure = await handle.result().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(toolFailureOf(failure)).toMatchObject({ code: TOOL_ERROR_CODES.APPROVAL_REJECTED, retryable: false });
    expect(toolFailureOf(failure)?.message).toContain('Not this guest.');
    expect(effectsUnder(runKey)).toEqual([]);
    expect(await auditStore.get(`${runKey}/1`)).toMatchObject({ decision: 'rejected', outcome: 'not_run' });
  });
});

describe('an embedded agent and a call of the workflow, both gated', () => {
  useProcessEnv(testServerCliEnv(stateDir));

  it('are approved one after the other by step through the same update', async () => {
    const handle = await start(agentThenNotice, { to: 'dan@example.com' });
    const runKey = `${handle.workflowId}/${handle.firstExecutionRunId}`;
    const [agentCall] = await pendingOf(handle.workflowId);
    expect(agentCall).toMatchObject({ stepId: 1, tool: 'send_notice', arguments: { text: 'From the agent.' } });
    expect((await runCliInProcess(['approve', handle.workflowId, '1', '--approver', 'alice', '--yes'])).code).toBe(0);

    const [ownCall] = await waitFor('the workflow’s own call to wait', async () => {
      const calls = await getPendingApprovals(temporal.client, handle.workflowId);
      return calls.some((call) => call.stepId === 2) ? calls : undefined;
    });
    expect(ownCall).toMatchObject({ stepId: 2, tool: 'send_notice', arguments: { text: 'From the workflow.' } });
    expect((await runCliInProcess(['approve', handle.workflowId, '2', '--approver', 'alice', '--yes'])).code).toBe(0);

    expect(await handle.result()).toEqual({ agent: 'completed', sent: true });
    expect(effectsUnder(runKey).map((e) => e.key)).toEqual([`${runKey}/1/agent/1`, `${runKey}/2`]);
  });
});
