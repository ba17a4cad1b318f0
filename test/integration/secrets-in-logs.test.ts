import type { LogLevel, LogMetadata, Logger } from '@temporalio/common';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { SqliteIdempotencyStore } from '../../src/stores/idempotency/sqlite-idempotency-store';
import { startJobCallbackServer } from '../../src/long-calls/job-callback-server';
import { callbackTokenOf, readJobRecord, type JobRecord } from '../../src/long-calls/job-record';
import { privateRuntimeLogger } from '../../src/telemetry/private-logs';
import { SqliteTranscriptStore } from '../../src/stores/transcripts/sqlite-transcript-store';
import { createAsyncJobTools, type AsyncJobUrls } from '../support/async-job-tools';
import { startJobDownstream } from '../support/job-downstream';
import { createTestWorker, loggerWriting, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

/**
 * No log line carries a task token or a callback secret: the worker's logs are captured at every level
 * (Temporal's core included) through a real async-job call completed by its callback, and searched for the
 * attempt's task token, the job's callback secret and the callback token.
 */

interface Entry {
  level: LogLevel;
  message: string;
  meta?: LogMetadata;
}

/** Records every line the runtime is given, at every level, unfiltered. */
function recorder(into: Entry[]): Logger {
  return loggerWriting((level, message, meta) => into.push({ level, message, ...(meta ? { meta } : {}) }));
}

function textOf(entry: Entry): string {
  let meta: string;
  try {
    meta = JSON.stringify(entry.meta, (_, value: unknown) =>
      value instanceof Uint8Array
        ? Buffer.from(value).toString('base64')
        : typeof value === 'bigint'
          ? String(value)
          : value,
    );
  } catch {
    meta = String(entry.meta);
  }
  return `${entry.level} ${entry.message} ${meta ?? ''}`;
}

const entries: Entry[] = [];
// This file owns the process's runtime: every line, core's too, reaches the recorder unfiltered.
const temporal = useTestTemporal({ logger: recorder(entries) });

test('an async-job call completed by its callback leaves its task token and callback secret in no log line', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'secrets-in-logs-'));
  const downstream = await startJobDownstream({ callbackAfterMs: 1_000 });
  const urls: AsyncJobUrls = { downstream: downstream.url, callbacks: '' };
  const tools = createAsyncJobTools(urls);
  const transcripts = new SqliteTranscriptStore({ path: join(dir, 'transcripts.sqlite') });
  const idempotencyStore = new SqliteIdempotencyStore({ path: join(dir, 'keys.sqlite') });
  const callbacks = await startJobCallbackServer({ client: temporal.client, store: transcripts, tools });
  urls.callbacks = callbacks.url;
  const taskQueue = uniqueTaskQueue('secrets-in-logs');
  const worker = await createTestWorker(temporal, { tools, taskQueue, transcripts, idempotencyStore });
  let waiting: JobRecord | undefined;
  const result = await worker.runUntil(async () => {
    const handle = await startAgentRun(
      temporal.client,
      {
        goal: 'double 21',
        model: {
          provider: 'scripted',
          script: [
            { toolCalls: [{ name: 'double_by_callback', arguments: { value: 21 } }] },
            { text: 'done', final: true },
          ],
        },
      },
      { taskQueue },
    );
    waiting = await waitFor('the attempt waiting for the callback, with its task token recorded', async () => {
      const record = await readJobRecord(transcripts, `${handle.workflowId}/${handle.firstExecutionRunId}/1`);
      return record?.taskToken ? record : undefined;
    });
    return waitForAgentRun(handle);
  });
  await callbacks.close();
  await downstream.close();
  await idempotencyStore.close();
  await transcripts.close();

  expect(result.status).toBe('completed');
  expect(downstream.callbackAnswers).toEqual([{ status: 200, body: expect.objectContaining({ status: 'completed' }) }]);
  const record = waiting!;
  const taskToken = record.taskToken!;
  const secrets = {
    taskToken,
    taskTokenBase64Url: Buffer.from(taskToken, 'base64').toString('base64url'),
    callbackSecret: record.secret,
    callbackToken: callbackTokenOf(record),
  };
  // The capture saw the call: the worker's own line about the wait, and the SDK's activity lines.
  const lines = entries.map(textOf);
  expect(lines.some((line) => line.includes('Waiting for the job callback.'))).toBe(true);
  expect(lines.some((line) => line.includes('Activity started'))).toBe(true);

  // At DEBUG and above (what a worker logs with any usual level), no line carries a secret.
  const visible = entries.filter((entry) => entry.level !== 'TRACE').map(textOf);
  for (const [name, secret] of Object.entries(secrets)) {
    expect([name, visible.filter((line) => line.includes(secret))]).toEqual([name, []]);
  }
  // TRACE lines of the SDK itself carry the token; the runtime logger the command line installs drops it.
  const filtered: Entry[] = [];
  const cleaned = privateRuntimeLogger(recorder(filtered));
  for (const entry of entries) cleaned.log(entry.level, entry.message, entry.meta);
  expect(filtered).toHaveLength(entries.length);
  const all = filtered.map(textOf);
  for (const [name, secret] of Object.entries(secrets)) {
    expect([name, all.filter((line) => line.includes(secret))]).toEqual([name, []]);
  }
});
