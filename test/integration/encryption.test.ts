/**
 * Issue 15, payload encryption on the real dev server: what a run writes to Temporal's history and to the
 * idempotency and transcript stores is ciphertext (read back with `temporal workflow show -o json` and from the
 * SQLite files), while clients holding the keys read everything in clear; and a key rotated in the middle of a
 * run leaves the old payloads readable while the new ones use the new key.
 */
import { Client, type WorkflowHandle } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import type { Worker } from '@temporalio/worker';
import Database from 'better-sqlite3';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { approveStep, getPendingApprovals } from '../../src/client/approval-client';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { readRun } from '../../src/client/read-run';
import { resolveTemporalCli } from '../../src/dev-server/temporal-cli';
import { ENCRYPTED_PAYLOAD, encryptedDataConverter } from '../../src/encryption/encryption-codec';
import type { EncryptionKeyring } from '../../src/encryption/encryption-keys';
import { SqliteIdempotencyStore } from '../../src/stores/idempotency/sqlite-idempotency-store';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import { SqliteTranscriptStore } from '../../src/stores/transcripts/sqlite-transcript-store';
import { createWorker } from '../../src/runtime/create-worker';
import { createApprovalTools } from '../support/approval-tools';
import { keyEntry, keyringOf } from '../support/encryption-keys';
import { useTestTemporal, testServer, uniqueTaskQueue } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

const ACCOUNT = 'DE89-3704-0044-0532-0130-00';
const REFERENCE = 'Invoice for Ada Lovelace, 12 Baker Street';
const k1 = keyEntry('k1');
const k2 = keyEntry('k2');
const dir = mkdtempSync(join(tmpdir(), 'encryption-it-'));

/** Look up an account, pay (which waits for approval), then finish. */
const SCRIPT: ScriptedTurn[] = [
  { toolCalls: [{ name: 'lookup', arguments: { account: ACCOUNT } }] },
  { toolCalls: [{ name: 'pay', arguments: { amountEur: 12, reference: REFERENCE } }] },
  { text: 'Paid.', final: true },
];

const temporal = useTestTemporal();

function clientWith(keyring: EncryptionKeyring): Client {
  return new Client({
    connection: temporal.client.connection,
    namespace: testServer().namespace,
    dataConverter: encryptedDataConverter(keyring)!,
  });
}

async function encryptedWorker(keyring: EncryptionKeyring, taskQueue: string, stores = 'stores'): Promise<Worker> {
  const { worker } = await createWorker({
    // Stores not given here stay in memory (durable ones are the default).
    stores: 'memory',
    tools: createApprovalTools().tools,
    connection: temporal.nativeConnection,
    settings: { namespace: testServer().namespace, taskQueue },
    workflowBundle: { codePath: testServer().bundlePath },
    idempotencyStore: new SqliteIdempotencyStore({ path: join(dir, `${stores}-idempotency.sqlite`) }),
    transcripts: new SqliteTranscriptStore({ path: join(dir, `${stores}-transcripts.sqlite`) }),
    encryption: keyring,
  });
  return worker;
}

/** Runs the worker until the run waits for the approval of `pay`, and returns that pending approval. */
async function untilPayIsPending(worker: Worker, client: Client, handle: WorkflowHandle) {
  return worker.runUntil(
    waitFor('pay to wait for approval', async () => (await getPendingApprovals(client, handle.workflowId))[0]),
  );
}

/**
 * Every payload of a history (inputs, results, failure details, summaries, ...), found by walking the events;
 * search attributes excepted: the server indexes them, so they stay readable (and hold statuses, never arguments).
 */
/**
 * Every payload in `value` but search attributes, `patched()` markers and a local activity marker's `data`:
 * Temporal's core writes those itself, without the payload codec (a patch marker's details: the patch id; a local
 * activity marker's `data`: its sequence number, attempt, activity type and times, as plain JSON), and they hold
 * nothing of the run's. The local activity's result, in the same marker, is the run's and is walked.
 */
function payloadsOf(value: unknown, found: Payload[] = []): Payload[] {
  if (Array.isArray(value)) value.forEach((item) => payloadsOf(item, found));
  else if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    if (record.metadata && typeof record.metadata === 'object' && 'encoding' in record.metadata) {
      found.push(record as Payload);
    } else if (!isPatchMarker(record)) {
      for (const [key, item] of Object.entries(record)) {
        if (key !== 'searchAttributes' && !(key === 'data' && isLocalActivityMarkerDetails(record))) {
          payloadsOf(item, found);
        }
      }
    }
  }
  return found;
}

function isPatchMarker(record: Record<string, unknown>): boolean {
  return (record.markerRecordedEventAttributes as { markerName?: string } | undefined)?.markerName === 'core_patch';
}

/** The details of a local activity marker (`core_local_activity`): `data` (core's) beside `result` (the run's). */
function isLocalActivityMarkerDetails(record: Record<string, unknown>): boolean {
  return 'data' in record && 'result' in record;
}

function keyIdsOf(payloads: Payload[]): string[] {
  const ids = payloads.map((p) => Buffer.from(p.metadata?.[ENCRYPTED_PAYLOAD.keyIdKey] ?? []).toString('utf8'));
  return [...new Set(ids)].sort();
}

function sqliteText(file: string): string {
  const db = new Database(join(dir, file), { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>;
    return tables.map(({ name }) => JSON.stringify(db.prepare(`SELECT * FROM "${name}"`).all())).join('\n');
  } finally {
    db.close();
  }
}

describe('a run with payload encryption', () => {
  let handle: WorkflowHandle;
  let runResult: Awaited<ReturnType<typeof waitForAgentRun>>;

  beforeAll(async () => {
    const keyring = keyringOf(k1);
    const client = clientWith(keyring);
    const taskQueue = uniqueTaskQueue('encryption');
    const worker = await encryptedWorker(keyring, taskQueue, 'plain-run');
    handle = await startAgentRun(
      client,
      { goal: `Pay ${REFERENCE}`, model: { provider: 'scripted', script: SCRIPT } },
      { taskQueue },
    );
    runResult = await worker.runUntil(async () => {
      const pending = await waitFor(
        'the approval request',
        async () => (await getPendingApprovals(client, handle.workflowId))[0],
      );
      await approveStep(client, handle.workflowId, { stepId: pending.stepId, digest: pending.digest, approver: 'ops' });
      return waitForAgentRun(client.workflow.getHandle(handle.workflowId));
    });
  });

  test('reads the arguments and outputs in clear through a client holding the key', () => {
    expect(runResult.status).toBe('completed');
    expect(runResult.steps.map((step) => step.arguments)).toEqual([
      { account: ACCOUNT },
      { amountEur: 12, reference: REFERENCE },
    ]);
  });

  test('leaves only ciphertext in the history `temporal workflow show -o json` prints', async () => {
    const cli = await resolveTemporalCli();
    const { address, namespace } = testServer();
    const { stdout } = await promisify(execFile)(
      cli.path,
      ['workflow', 'show', '-w', handle.workflowId, '--address', address, '--namespace', namespace, '-o', 'json'],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    for (const secret of [ACCOUNT, REFERENCE, 'Baker', Buffer.from(ACCOUNT).toString('base64').slice(0, 16)]) {
      expect(stdout).not.toContain(secret);
    }
    expect(stdout).toContain(Buffer.from(ENCRYPTED_PAYLOAD.encoding).toString('base64'));
  });

  test('encrypts every payload of the history but search attributes, activity summaries and the run summary included', async () => {
    const history = await temporal.client.workflow.getHandle(handle.workflowId).fetchHistory();
    const payloads = payloadsOf(history.events);
    expect(payloads.length).toBeGreaterThan(10);
    const encodings = new Set(payloads.map((p) => Buffer.from(p.metadata!.encoding!).toString('utf8')));
    expect([...encodings]).toEqual([ENCRYPTED_PAYLOAD.encoding]);
    // On the fast path (the default) lookup runs inside the first step's local activity, whose marker has the
    // summary; pay, which waits for an approval, is a regular activity with its own.
    const scheduled = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes);
    const summarized = scheduled.filter((e) => e.userMetadata?.summary);
    expect(summarized.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)).toContain('pay');
    const markers = (history.events ?? []).filter((e) => e.markerRecordedEventAttributes && e.userMetadata?.summary);
    expect(markers.length).toBeGreaterThan(0);
    summarized.push(...markers);
    const summaryEncodings = summarized.map((e) =>
      Buffer.from(e.userMetadata!.summary!.metadata!.encoding!).toString(),
    );
    expect(new Set(summaryEncodings)).toEqual(new Set([ENCRYPTED_PAYLOAD.encoding]));
    expect(history.events?.[0]?.userMetadata?.summary?.metadata?.encoding).toBeDefined();
    expect(keyIdsOf(payloads)).toEqual(['k1']);
  });

  test('keeps the idempotency and transcript stores encrypted on disk', () => {
    for (const file of ['plain-run-idempotency.sqlite', 'plain-run-transcripts.sqlite']) {
      const text = sqliteText(file);
      expect(text).toContain('dtenc:v1:k1:');
      expect(text).not.toContain('Baker');
      expect(text).not.toContain(ACCOUNT);
    }
  });
});

test('a key rotated in the middle of a run: the old payloads stay readable and the new ones use the new key', async () => {
  const taskQueue = uniqueTaskQueue('rotation');
  const before = clientWith(keyringOf(k1));
  // Regular activities: `show` rebuilds a run's steps from its activity events when no worker answers (a local
  // call's marker is not read there).
  const handle = await startAgentRun(
    before,
    { goal: 'rotation', model: { provider: 'scripted', script: SCRIPT }, fastPath: false },
    { taskQueue },
  );
  await untilPayIsPending(await encryptedWorker(keyringOf(k1), taskQueue, 'rotation'), before, handle);
  // No worker now: `durable-tools show` rebuilds the steps from the history, decrypted with the client's keys.
  const view = await readRun(before, handle.workflowId);
  expect(view.historySteps?.[0]).toMatchObject({
    tool: 'lookup',
    arguments: { account: ACCOUNT },
    status: 'succeeded',
  });

  // Rotation: k2 first (current), k1 kept for reading. A new worker replays the k1 history and goes on with k2.
  const rotated = keyringOf(k2, k1);
  const after = clientWith(rotated);
  const result = await (
    await encryptedWorker(rotated, taskQueue, 'rotation')
  ).runUntil(async () => {
    const pending = await waitFor(
      'the approval request',
      async () => (await getPendingApprovals(after, handle.workflowId))[0],
    );
    await approveStep(after, handle.workflowId, { stepId: pending.stepId, digest: pending.digest, approver: 'ops' });
    return waitForAgentRun(after.workflow.getHandle(handle.workflowId));
  });
  expect(result.status).toBe('completed');
  expect(result.steps[1]?.arguments).toEqual({ amountEur: 12, reference: REFERENCE });
  const payloads = payloadsOf((await after.workflow.getHandle(handle.workflowId).fetchHistory()).events);
  expect(keyIdsOf(payloads)).toEqual(['k1', 'k2']);
  expect(sqliteText('rotation-transcripts.sqlite')).toMatch(
    /dtenc:v1:k1:[\s\S]*dtenc:v1:k2:|dtenc:v1:k2:[\s\S]*dtenc:v1:k1:/,
  );
});
