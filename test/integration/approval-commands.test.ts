/**
 * The approval commands (`pending`, `approve`, `reject`, `audit`) driven as a user would: real
 * `durable-tools` processes against the test server, a worker of the approval tools in this process writing
 * its audit trail to a SQLite file the `audit` command reads. What ran is counted where the tools run.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getPendingApprovals, listPendingApprovals, approveStep } from '../../src/client/approval-client';
import { argumentsDigest } from '../../src/activities/arguments-digest';
import { SqliteAuditStore } from '../../src/stores/audit/sqlite-audit-store';
import { runCliInProcess } from '../support/cli-in-process';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import { createApprovalTools, type ApprovalToolCall } from '../support/approval-tools';
import { REPO_ROOT, runCliToEnd } from '../support/cli-process';
import { createTestWorker, testServer, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';
import { runKeyOf } from '../support/run-key';

const dir = mkdtempSync(join(tmpdir(), 'approval-commands-'));
const auditPath = join(dir, 'audit.sqlite');
const taskQueue = uniqueTaskQueue('approval-commands');

/** The environment of the command processes: the test server, and the worker's audit file. */
const env: NodeJS.ProcessEnv = {
  TEMPORAL_ADDRESS: testServer().address,
  TEMPORAL_NAMESPACE: testServer().namespace,
  TEMPORAL_CONFIG_FILE: join(dir, 'no-temporal.toml'),
  DURABLE_TOOLS_AUDIT_STORE: 'sqlite',
  DURABLE_TOOLS_AUDIT_SQLITE_PATH: auditPath,
  USER: 'operator',
};

let calls: ApprovalToolCall[];
let auditStore: SqliteAuditStore;

const temporal = useTestTemporal({
  worker: (temporal) => {
    auditStore = new SqliteAuditStore({ path: auditPath });
    const approvalTools = createApprovalTools();
    calls = approvalTools.calls;
    return createTestWorker(temporal, { tools: approvalTools.tools, taskQueue, auditStore });
  },
});
afterAll(async () => {
  await auditStore?.close();
});

const pay = (amountEur: number, reference = 'INV-1'): ScriptedTurn => ({
  toolCalls: [{ name: 'pay', arguments: { amountEur, reference } }],
});
const final: ScriptedTurn = { text: 'done', final: true };

/** Starts a run of `script` and waits until its first gated call is listed by the visibility query. */
async function startWaitingRun(script: ScriptedTurn[]): Promise<string> {
  const handle = await startAgentRun(
    temporal.client,
    { goal: 'approval commands', model: { provider: 'scripted', script } },
    { taskQueue },
  );
  await waitFor('the run to be listed as waiting for approval', async () => {
    const pending = await listPendingApprovals(temporal.client, { taskQueue });
    return pending.some((p) => p.workflowId === handle.workflowId);
  });
  return handle.workflowId;
}

/** The calls that reached an implementation in one run. */
function callsOf(workflowId: string): ApprovalToolCall[] {
  return calls.filter((call) => call.key.startsWith(`${workflowId}/`));
}

describe('pending and approve', () => {
  test('pending lists the waiting call with its arguments and digest; approve with that digest runs the tool once', async () => {
    const workflowId = await startWaitingRun([pay(120), final]);
    const digest = argumentsDigest({ amountEur: 120, reference: 'INV-1' });

    const pending = await runCliToEnd(['pending', '--task-queue', taskQueue], env);
    expect(pending.code).toBe(0);
    expect(pending.stdout).toContain(`${workflowId}  step 1  pay  {"amountEur":120,"reference":"INV-1"}`);
    expect(pending.stdout).toContain(`digest ${digest}`);
    expect(callsOf(workflowId)).toEqual([]);

    const approve = await runCliToEnd(
      ['approve', workflowId, '1', '--digest', digest, '--approver', 'alice', '--reason', 'invoice checked'],
      env,
    );
    expect(approve.code).toBe(0);
    expect(approve.stdout).toMatch(/tool +pay/);
    expect(approve.stdout).toMatch(/"amountEur": 120/);
    expect(approve.stdout).toContain(`digest    ${digest}`);
    expect(approve.stdout).toContain('Approved by alice: step 1 (pay)');

    const result = await waitForAgentRun(temporal.client.workflow.getHandle(workflowId));
    expect(result.status).toBe('completed');
    expect(result.steps[0]).toMatchObject({
      status: 'succeeded',
      approval: { decision: 'approved', decidedBy: 'alice' },
    });
    expect(callsOf(workflowId).map((c) => c.tool)).toEqual(['pay']);
  });

  test("approve refuses a digest that is not the call's: exit 1, nothing approved, the call still waits", async () => {
    const workflowId = await startWaitingRun([pay(120), final]);
    const reviewed = argumentsDigest({ amountEur: 12, reference: 'INV-1' });

    const approve = await runCliToEnd(['approve', workflowId, '--digest', reviewed, '--approver', 'alice'], env);
    expect(approve.code).toBe(1);
    expect(approve.stdout).toContain(`digest    ${argumentsDigest({ amountEur: 120, reference: 'INV-1' })}`);
    expect(approve.stderr).toContain(`The digest changed: you reviewed ${reviewed}`);
    expect(approve.stderr).toContain('Nothing was done');
    expect(approve.stdout).not.toContain('Approved');

    const [still] = await getPendingApprovals(temporal.client, workflowId);
    expect(still).toMatchObject({ stepId: 1, tool: 'pay' });
    expect(callsOf(workflowId)).toEqual([]);
    await runCliToEnd(['reject', workflowId, '1', '--reason', 'test over'], env);
    await waitForAgentRun(temporal.client.workflow.getHandle(workflowId));
  });

  test('a second decision on a decided call exits 1 and runs nothing again', async () => {
    const workflowId = await startWaitingRun([pay(120), final]);
    const [call] = await getPendingApprovals(temporal.client, workflowId);
    await approveStep(temporal.client, workflowId, { stepId: 1, digest: call!.digest, approver: 'alice' });
    await waitForAgentRun(temporal.client.workflow.getHandle(workflowId));

    const again = await runCliToEnd(['approve', workflowId, '1', '--approver', 'mallory'], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`Step 1 of run ${workflowId} is not waiting for approval`);
    expect(callsOf(workflowId).map((c) => c.tool)).toEqual(['pay']);
  });
});

describe('reject and audit', () => {
  test('reject with a reason: nothing runs and the model gets the reason as an observation', async () => {
    const workflowId = await startWaitingRun([pay(900), final]);

    const reject = await runCliToEnd(['reject', workflowId, '--reason', 'over budget', '--approver', 'bob'], env);
    expect(reject.code).toBe(0);
    expect(reject.stdout).toMatch(/tool +pay/);
    expect(reject.stdout).toContain('Rejected by bob: step 1 (pay) will not run.');

    const result = await waitForAgentRun(temporal.client.workflow.getHandle(workflowId));
    expect(result.status).toBe('completed');
    expect(result.turns).toBe(2);
    expect(result.steps[0]).toMatchObject({
      status: 'failed',
      observation: { status: 'error', code: 'APPROVAL_REJECTED', message: expect.stringContaining('over budget') },
    });
    expect(callsOf(workflowId)).toEqual([]);
  });

  test('audit prints the record of each gated call: key, tool, digest, decision, who, why, outcome', async () => {
    const approved = await startWaitingRun([pay(120, 'INV-7'), final]);
    const [call] = await getPendingApprovals(temporal.client, approved);
    await approveStep(temporal.client, approved, {
      stepId: 1,
      digest: call!.digest,
      approver: 'alice',
      reason: 'invoice checked',
    });
    await waitForAgentRun(temporal.client.workflow.getHandle(approved));
    const rejected = await startWaitingRun([pay(900, 'INV-8'), final]);
    await runCliToEnd(['reject', rejected, '--reason', 'over budget', '--approver', 'bob'], env);
    await waitForAgentRun(temporal.client.workflow.getHandle(rejected));

    const audit = await runCliToEnd(['audit', approved], env);
    expect(audit.code).toBe(0);
    const approvedKey = await runKeyOf(temporal.client.workflow.getHandle(approved));
    expect(audit.stdout).toContain(`${approvedKey}/1  pay  {"amountEur":120,"reference":"INV-7"}`);
    expect(audit.stdout).toContain(`digest    ${call!.digest}`);
    expect(audit.stdout).toMatch(/decision {2}approved by alice at \S+ \(invoice checked\)/);
    expect(audit.stdout).toMatch(/outcome {3}succeeded at /);
    expect(audit.stdout).not.toContain(rejected);

    const rejectedKey = await runKeyOf(temporal.client.workflow.getHandle(rejected));
    const json = await runCliToEnd(['audit', rejected, '--json'], env);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({
        idempotencyKey: `${rejectedKey}/1`,
        tool: 'pay',
        decision: 'rejected',
        decidedBy: 'bob',
        reason: 'over budget',
        outcome: 'not_run',
        outcomeCode: 'APPROVAL_REJECTED',
      }),
    ]);
  });
});

describe('audit of a cancelled run', () => {
  test('a call whose run was cancelled while it waited is shown as cancelled, not as waiting for a decision', async () => {
    const workflowId = await startWaitingRun([pay(300, 'INV-9'), final]);
    const handle = temporal.client.workflow.getHandle(workflowId);
    await handle.cancel();
    await handle.result().catch(() => undefined);

    const audit = await runCliToEnd(['audit', workflowId], env);
    expect(audit.code).toBe(0);
    expect(audit.stdout).toMatch(/decision {2}cancelled \(the run was cancelled while the call waited\)/);
    expect(audit.stdout).toMatch(/outcome {3}not_run CANCELLED at /);
    expect(audit.stdout).not.toContain('waiting for a decision');
    expect(callsOf(workflowId)).toEqual([]);
  });
});

describe('on a terminal', () => {
  test('approve asks first, and an answer other than yes does nothing', async () => {
    const workflowId = await startWaitingRun([pay(120), final]);
    // `script` gives the command a pseudo-terminal; its stdin is what the user types.
    const command = `${process.execPath} --import tsx src/cli/main.ts approve ${workflowId} 1 --approver alice`;
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await waitFor('the question', () => /Approve this call as alice\? \[y\/N\]/.test(output), { timeoutMs: 60_000 });
    child.stdin.write('n\n');
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(output).toContain('Nothing was done.');
    expect(await getPendingApprovals(temporal.client, workflowId)).toHaveLength(1);
    expect(callsOf(workflowId)).toEqual([]);
    await runCliToEnd(['reject', workflowId, '1', '--reason', 'test over', '--yes'], env);
    await waitForAgentRun(temporal.client.workflow.getHandle(workflowId));
  });
});

describe('usage', () => {
  test('a rejection without --reason exits 2 with a pointer to --help', async () => {
    const { code, stderr } = await runCliToEnd(['reject', 'agent-run-x', '1'], env);
    expect(code).toBe(2);
    expect(stderr).toMatch(/A rejection needs --reason[\s\S]*durable-tools reject --help/);
  });

  test.each([
    [['approve'], /Missing argument: <workflow id>/],
    [['approve', 'agent-run-x', 'two'], /step must be a step number/],
    [['approve', 'agent-run-x', '--digest', 'abc'], /--digest must be the 64 hex digits/],
    [['approve', 'agent-run-x', '1', '2'], /Unexpected argument: 2/],
    [['audit', '--limit', '0'], /--limit must be a positive integer/],
    [['pending', '--colour'], /Unknown option '--colour'/],
  ])('%j exits 2 and says what is wrong', async (argv, message) => {
    const { code, stderr } = await runCliInProcess(argv);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });

  test('audit with no trail where the worker would write one exits 1 and says where it looked', async () => {
    const missing = join(dir, 'nowhere', 'audit.sqlite');
    const { code, stderr } = await runCliToEnd(['audit'], { ...env, DURABLE_TOOLS_AUDIT_SQLITE_PATH: missing });
    expect(code).toBe(1);
    expect(stderr).toContain(`No audit trail at ${missing}`);
  });

  test('approve of a run that does not exist exits 1', async () => {
    const { code, stderr } = await runCliToEnd(['approve', `${taskQueue}-nothing`], env);
    expect(code).toBe(1);
    expect(stderr).toContain(`No run ${taskQueue}-nothing`);
  });
});
