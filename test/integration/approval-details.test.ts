/**
 * What Temporal shows of a run waiting for approval, read without a browser: the workflow's current details
 * (the `__temporal_workflow_metadata` query the UI's "Current Details" panel reads) name the tool, the step,
 * the digest and the commands that decide it; the approval timer carries a summary; once decided, the details
 * stop saying the run waits.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { approveStep } from '../../src/client/approval-client';
import { waitForAgentRun } from '../../src/client/agent-run-client';
import { startPayAwaitingApproval } from '../support/approval-runs';
import { createApprovalTools } from '../support/approval-tools';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

const taskQueue = uniqueTaskQueue('approval-details');

const temporal = useTestTemporal({
  worker: (temporal) => createTestWorker(temporal, { tools: createApprovalTools().tools, taskQueue }),
});

/** The run's current details, as the UI reads them. */
async function currentDetails(workflowId: string): Promise<string> {
  const metadata = await temporal.client.workflow
    .getHandle(workflowId)
    .query<{ currentDetails?: string | null }>('__temporal_workflow_metadata');
  return metadata.currentDetails ?? '';
}

/** Starts a run whose first call (`pay`) waits for approval; resolves once it waits. */
async function startWaitingRun(): Promise<{ workflowId: string; digest: string }> {
  const { handle, pending } = await startPayAwaitingApproval(temporal.client, taskQueue, 20);
  return { workflowId: handle.workflowId, digest: pending.digest };
}

test("a waiting run's current details name the tool, the step, the digest and the approve command", async () => {
  const { workflowId, digest } = await startWaitingRun();
  const details = await waitFor('current details', async () => {
    const text = await currentDetails(workflowId);
    return text.includes('Waiting for approval') ? text : undefined;
  });
  expect(details).toContain('step 1 (`pay`)');
  expect(details).toContain(`arguments digest \`${digest}\``);
  expect(details).toContain(`npx durable-tools approve ${workflowId} 1 --digest ${digest}`);
  expect(details).toContain(`npx durable-tools reject ${workflowId} 1 --digest ${digest} --reason`);
  expect(details).not.toContain('INV-7');
  await approveStep(temporal.client, workflowId, { stepId: 1, digest, approver: 'test' });
});

test("the approval timer's summary says what it waits for", async () => {
  const { workflowId, digest } = await startWaitingRun();
  const history = await temporal.client.workflow.getHandle(workflowId).fetchHistory();
  const timer = history.events?.find((event) => event.timerStartedEventAttributes);
  const summary = timer?.userMetadata?.summary;
  expect(summary).toBeDefined();
  expect(defaultPayloadConverter.fromPayload(summary!)).toBe(
    `Approval deadline of step 1 (pay), digest ${digest.slice(0, 12)}: undecided means rejected`,
  );
  await approveStep(temporal.client, workflowId, { stepId: 1, digest, approver: 'test' });
});

test('once the call is decided, the details no longer say the run waits', async () => {
  const { workflowId, digest } = await startWaitingRun();
  await approveStep(temporal.client, workflowId, { stepId: 1, digest, approver: 'test' });
  const result = await waitForAgentRun(temporal.client.workflow.getHandle(workflowId));
  expect(result.status).toBe('completed');
  const details = await currentDetails(workflowId);
  expect(details).not.toContain('Waiting for approval');
  expect(details).toContain('**Outcome:** completed');
});
