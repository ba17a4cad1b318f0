import type { Duration } from '@temporalio/common';
import { killProcess, spawnTestWorkerProcess } from '../support/worker-process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from '@temporalio/worker';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { SqliteIdempotencyStore } from '../../src/stores/idempotency/sqlite-idempotency-store';
import { startJobCallbackServer, type JobCallbackServer } from '../../src/long-calls/job-callback-server';
import { readJobRecord, callbackTokenOf } from '../../src/long-calls/job-record';
import { SqliteTranscriptStore } from '../../src/stores/transcripts/sqlite-transcript-store';
import type { Tool } from '../../src/tools/define-tool';
import { scriptedModel } from '../../src/model/scripted-model';
import type { ModelProvider } from '../../src/contract/model-types';
import type { AgentRunInput, AgentRunResult } from '../../src/contract/agent-run-types';
import { callTurn, runToEnd, scriptedRun } from '../support/agent-runs';
import { createAsyncJobTools, type AsyncJobUrls } from '../support/async-job-tools';
import {
  jobOutput,
  startJobDownstream,
  type JobDownstream,
  type JobDownstreamBehaviour,
} from '../support/job-downstream';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';
import { ASYNC_JOB_WORKER, ASYNC_JOB_WORKER_LEASE_MS } from '../support/async-job-worker';
import { createSqliteTestWorker, sqliteStoresIn } from '../support/sqlite-test-worker';

/**
 * Async-job tools (issue 16, call-now / fetch-later) on the real server: the submission runs once under the
 * idempotency key, and the result comes by a callback from outside the worker (through the callback
 * endpoint, which completes the activity by task token) or by polling with backoff and a deadline.
 */

const temporal = useTestTemporal();
let workDir: string;
beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'async-jobs-'));
});

/** Everything one test runs against: the downstream, the stores, the callback endpoint, a worker. */
interface Setup {
  downstream: JobDownstream;
  callbacks: JobCallbackServer;
  transcripts: SqliteTranscriptStore;
  worker: Worker;
  taskQueue: string;
  /** The names of the tools the model was shown, turn by turn (runs with provider `recorded-script`). */
  toolsShown: string[][];
  /** Keys `release_reservation` undid. */
  undone: string[];
  close(): Promise<void>;
}

async function setUp(name: string, behaviour: JobDownstreamBehaviour, pollDeadline: Duration = '2 m'): Promise<Setup> {
  const downstream = await startJobDownstream(behaviour);
  const urls: AsyncJobUrls = { downstream: downstream.url, callbacks: '' };
  const undone: string[] = [];
  const tools: Tool[] = createAsyncJobTools(urls, pollDeadline, undone);
  const transcripts = new SqliteTranscriptStore({ path: join(workDir, `${name}-transcripts.sqlite`) });
  const idempotencyStore = new SqliteIdempotencyStore({ path: join(workDir, `${name}-keys.sqlite`) });
  // The callback endpoint runs outside the worker, with its own client; it shares the transcript store.
  const callbacks = await startJobCallbackServer({ client: temporal.client, store: transcripts, tools });
  urls.callbacks = callbacks.url;
  const taskQueue = uniqueTaskQueue(name);
  const toolsShown: string[][] = [];
  const recordedScript: ModelProvider = (request) => {
    toolsShown.push(request.tools.map((tool) => tool.name));
    return scriptedModel(request);
  };
  const worker = await createTestWorker(temporal, {
    tools,
    taskQueue,
    transcripts,
    idempotencyStore,
    modelProviders: { 'recorded-script': recordedScript },
  });
  return {
    downstream,
    callbacks,
    transcripts,
    worker,
    taskQueue,
    toolsShown,
    undone,
    close: async () => {
      await callbacks.close();
      await downstream.close();
      await idempotencyStore.close();
      await transcripts.close();
    },
  };
}

function runOf(tool: string, value: number): AgentRunInput {
  return {
    goal: 'double a number',
    model: {
      provider: 'scripted',
      script: [{ toolCalls: [{ name: tool, arguments: { value } }] }, { text: 'done', final: true }],
    },
  };
}

/** The model's last turn: it answers `text`. */
const final = (text: string) => ({ text, final: true });

/** Runs `input` on the set-up's worker and task queue to its end: the run's result. */
async function runOnSetUp(setup: Setup, input: AgentRunInput): Promise<AgentRunResult> {
  return (await runToEnd(setup.worker, temporal.client, setup.taskQueue, input)).result;
}

/** POSTs a callback to the endpoint as a downstream would. */
async function postCallback(
  url: string,
  body: unknown,
): Promise<{ status: number; body: { error?: { code: string } } }> {
  const response = await fetch(url, { method: 'POST', body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as { error?: { code: string } } };
}

test('a callback from the downstream completes the call: the job is submitted once and the run gets its output', async () => {
  const setup = await setUp('callback', { callbackAfterMs: 1_500 });
  const input: AgentRunInput = {
    ...runOf('double_by_callback', 21),
    allowedTools: ['double_by_callback', 'look_up_weather'],
  };
  input.model.provider = 'recorded-script';
  const result = await runOnSetUp(setup, input);
  await setup.close();

  expect(result.status).toBe('completed');
  expect(result.steps[0]?.observation).toEqual({ status: 'ok', output: { jobId: 'job-1', doubled: 42 } });
  expect(setup.downstream.submissions).toHaveLength(1);
  expect(setup.downstream.callbackAnswers).toEqual([
    { status: 200, body: expect.objectContaining({ status: 'completed', tool: 'double_by_callback', jobId: 'job-1' }) },
  ]);
  // No fetch-later tool in this run: no fetch_tool_result either.
  expect(setup.toolsShown[0]).toEqual(['double_by_callback', 'look_up_weather', 'read_stored_output']);
});

test('a callback sent before the submission has even returned still completes the call', async () => {
  const setup = await setUp('callback-early', { callbackAfterMs: 0, answerSubmissionAfterMs: 700 });
  const result = await runOnSetUp(setup, runOf('double_by_callback', 4));
  await setup.close();

  expect(result.status).toBe('completed');
  expect(result.steps[0]?.observation).toEqual({ status: 'ok', output: { jobId: 'job-1', doubled: 8 } });
  expect(setup.downstream.callbackAnswers).toEqual([
    { status: 200, body: expect.objectContaining({ status: 'completed' }) },
  ]);
  expect(setup.downstream.submissions).toHaveLength(1);
});

test('a forged token, an output that breaks the schema and a repeated callback are refused and change nothing', async () => {
  const setup = await setUp('callback-hostile', {});
  const result = await setup.worker.runUntil(async () => {
    const handle = await startAgentRun(temporal.client, runOf('double_by_callback', 5), { taskQueue: setup.taskQueue });
    const job = await waitFor('the job submitted and waiting', () => {
      const submitted = setup.downstream.jobs.get('job-1');
      return submitted?.callbackUrl ? submitted : undefined;
    });
    const key = `${handle.workflowId}/${handle.firstExecutionRunId}/1`;
    await waitFor('the waiting attempt recorded', async () => (await readJobRecord(setup.transcripts, key))?.taskToken);
    const url = job.callbackUrl!;
    const token = url.slice(url.lastIndexOf('/') + 1);
    const [encodedKey] = token.split('.');

    const forged = await postCallback(`${setup.callbacks.url}/${encodedKey}.${'A'.repeat(32)}`, jobOutput(job));
    expect(forged).toEqual({ status: 404, body: { error: expect.objectContaining({ code: 'INVALID_TOKEN' }) } });
    const garbage = await postCallback(`${setup.callbacks.url}/not-a-token`, jobOutput(job));
    expect(garbage.body.error?.code).toBe('INVALID_TOKEN');
    const wrongShape = await postCallback(url, { jobId: job.jobId, doubled: 'ten' });
    expect(wrongShape.status).toBe(422);
    expect(wrongShape.body).toMatchObject({
      error: { code: 'INVALID_OUTPUT', issues: [{ path: 'doubled', message: expect.any(String) }] },
    });
    // Still waiting: the refused callbacks completed nothing.
    expect((await handle.describe()).status.name).toBe('RUNNING');

    const accepted = await postCallback(url, jobOutput(job));
    expect(accepted.status).toBe(200);
    const finished = await waitForAgentRun(handle);
    const again = await postCallback(url, { jobId: job.jobId, doubled: 0 });
    expect(again).toEqual({ status: 409, body: { error: expect.objectContaining({ code: 'ALREADY_FINISHED' }) } });
    const record = await readJobRecord(setup.transcripts, key);
    expect(record && callbackTokenOf(record)).toBe(token);
    return finished;
  });
  await setup.close();

  expect(result.status).toBe('completed');
  expect(result.steps[0]?.observation).toEqual({ status: 'ok', output: { jobId: 'job-1', doubled: 10 } });
  expect(setup.downstream.submissions).toHaveLength(1);
});

test('a polled job is submitted once and polled with growing, jittered waits until it is done', async () => {
  const setup = await setUp('poll', { doneAtPoll: 6 });
  const result = await runOnSetUp(setup, runOf('double_by_polling', 8));
  await setup.close();

  expect(result.status).toBe('completed');
  expect(result.steps[0]?.observation).toEqual({ status: 'ok', output: { jobId: 'job-1', doubled: 16 } });
  expect(setup.downstream.submissions).toHaveLength(1);
  const polls = setup.downstream.jobs.get('job-1')!.pollTimes;
  expect(polls).toHaveLength(6);
  const gaps = polls.slice(1).map((at, i) => at - polls[i]!);
  // Decorrelated jitter never waits less than the first interval (150 ms; the clocks differ by a few ms).
  for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(140);
  expect(new Set(gaps).size).toBeGreaterThan(1);
});

test('an attempt that fails while polling is retried without submitting the job again', async () => {
  const setup = await setUp('poll-retry', { doneAtPoll: 3, failFirstPolls: 1 });
  const result = await runOnSetUp(setup, runOf('double_by_polling', 4));
  await setup.close();

  expect(result.status).toBe('completed');
  expect(result.steps[0]).toMatchObject({ attempts: 2, observation: { status: 'ok', output: { doubled: 8 } } });
  // The second attempt found the job recorded and polled it: one submission, one job.
  expect(setup.downstream.submissions).toHaveLength(1);
  expect(setup.downstream.jobs.size).toBe(1);
});

test('a polled job that never finishes fails the call with TIMEOUT at its deadline, and polling stops', async () => {
  const setup = await setUp('poll-deadline', {}, '3 s');
  const result = await runOnSetUp(setup, runOf('double_by_polling', 1));
  const polls = setup.downstream.jobs.get('job-1')!.pollTimes;
  const pollsAtEnd = polls.length;
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  await setup.close();

  expect(result.status).toBe('completed');
  expect(result.steps[0]?.observation).toMatchObject({ status: 'error', code: 'TIMEOUT', retryable: false });
  expect(setup.downstream.submissions).toHaveLength(1);
  expect(pollsAtEnd).toBeGreaterThanOrEqual(3);
  // The worker's own deadline check stopped polling (not Temporal's backstop timeout, whose error says nothing of
  // polls), after exactly the polls the downstream answered; none came later.
  expect(result.steps[0]?.observation).toMatchObject({
    message: expect.stringContaining(
      `did not finish within the tool's deadline (3000 ms after it was submitted; ${pollsAtEnd} polls)`,
    ),
  });
  expect(polls).toHaveLength(pollsAtEnd);
});

/** The callback URL of the downstream's first job, once it is submitted and its attempt waits. */
async function waitingCallbackUrl(setup: Setup, runKey: string): Promise<string> {
  const job = await waitFor('the job submitted', () => setup.downstream.jobs.get('job-1'));
  await waitFor('the attempt waiting', async () => (await readJobRecord(setup.transcripts, `${runKey}/1`))?.taskToken);
  return job.callbackUrl!;
}

test('the model starts a long call in the background, does other work, then fetches the result', async () => {
  const setup = await setUp('fetch-later', {});
  const input: AgentRunInput = {
    goal: 'double 7 and look up the weather',
    model: {
      provider: 'recorded-script',
      script: [
        { toolCalls: [{ name: 'double_in_background', arguments: { value: 7 } }] },
        { toolCalls: [{ name: 'look_up_weather', arguments: { city: 'Lisbon' } }] },
        { toolCalls: [{ name: 'fetch_tool_result', arguments: { handle: 'bg_1' } }] },
        { toolCalls: [{ name: 'fetch_tool_result', arguments: { handle: 'bg_1', waitSeconds: 120 } }] },
        { text: 'done', final: true },
      ],
    },
  };
  const result = await setup.worker.runUntil(async () => {
    const handle = await startAgentRun(temporal.client, input, { taskQueue: setup.taskQueue });
    const url = await waitingCallbackUrl(setup, `${handle.workflowId}/${handle.firstExecutionRunId}`);
    // The downstream calls back only once the model is waiting for the result (step 4).
    await waitFor('the model fetching with a wait', async () => {
      const state = await handle.query<{ steps: Array<{ stepId: number; status: string }> }>('getRunState');
      return state.steps.find((s) => s.stepId === 4)?.status === 'running';
    });
    expect((await postCallback(url, { jobId: 'job-1', doubled: 14 })).status).toBe(200);
    return waitForAgentRun(handle);
  });
  await setup.close();

  expect(result.status).toBe('completed');
  const [long, weather, early, fetched] = result.steps;
  expect(long).toMatchObject({ tool: 'double_in_background', status: 'succeeded' });
  expect(long?.observation).toEqual({ status: 'ok', output: { jobId: 'job-1', doubled: 14 } });
  // The other tool ran while the long call was still waiting for its callback.
  expect(weather).toMatchObject({ tool: 'look_up_weather', status: 'succeeded' });
  expect(weather!.endedAt!).toBeLessThan(long!.endedAt!);
  expect(early).toMatchObject({ tool: 'fetch_tool_result', status: 'succeeded' });
  expect(early?.observation).toMatchObject({
    status: 'ok',
    output: { $durableTools: 'background-call', handle: 'bg_1', status: 'running' },
  });
  expect(fetched).toMatchObject({ tool: 'fetch_tool_result', status: 'succeeded' });
  expect(fetched?.observation).toEqual({ status: 'ok', output: { jobId: 'job-1', doubled: 14 } });
  expect(setup.downstream.submissions).toHaveLength(1);
  expect(setup.toolsShown).toHaveLength(5);
  for (const shown of setup.toolsShown) expect(shown).toContain('fetch_tool_result');
});

test('a run whose model finishes while a background call runs waits for it by default', async () => {
  const setup = await setUp('fetch-later-wait', {});
  const input: AgentRunInput = {
    goal: 'double 3',
    model: {
      provider: 'scripted',
      script: [
        { toolCalls: [{ name: 'double_in_background', arguments: { value: 3 } }] },
        { text: 'started it', final: true },
      ],
    },
  };
  const result = await setup.worker.runUntil(async () => {
    const handle = await startAgentRun(temporal.client, input, { taskQueue: setup.taskQueue });
    const url = await waitingCallbackUrl(setup, `${handle.workflowId}/${handle.firstExecutionRunId}`);
    await waitFor('the model finished', async () => (await handle.query<{ turns: number }>('getRunState')).turns >= 2);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    expect((await postCallback(url, { jobId: 'job-1', doubled: 6 })).status).toBe(200);
    return waitForAgentRun(handle);
  });
  await setup.close();

  expect(result).toMatchObject({ status: 'completed', answer: 'started it' });
  expect(result.steps[0]?.observation).toEqual({ status: 'ok', output: { jobId: 'job-1', doubled: 6 } });
});

test('a run set to cancel background calls on finish cancels the one still running', async () => {
  const setup = await setUp('fetch-later-cancel', {});
  const input = scriptedRun('double 2', [callTurn('double_in_background', { value: 2 }), final('never mind')], {
    backgroundCalls: { onFinish: 'cancel' },
  });
  const result = await runOnSetUp(setup, input);
  await setup.close();

  expect(result.status).toBe('completed');
  expect(result.steps[0]).toMatchObject({ status: 'failed', observation: { status: 'error', code: 'CANCELLED' } });
});

test('cancelling a run while its call waits for a callback ends it at once; a later callback is not taken', async () => {
  const setup = await setUp('callback-cancel', {});
  const result = await setup.worker.runUntil(async () => {
    const handle = await startAgentRun(temporal.client, runOf('double_by_callback', 9), { taskQueue: setup.taskQueue });
    const url = await waitingCallbackUrl(setup, `${handle.workflowId}/${handle.firstExecutionRunId}`);
    await handle.cancel();
    const ended = await waitForAgentRun(handle);
    const late = await postCallback(url, { jobId: 'job-1', doubled: 18 });
    expect(late).toEqual({ status: 409, body: { error: expect.objectContaining({ code: 'NOT_WAITING' }) } });
    return ended;
  });
  await setup.close();

  expect(result.status).toBe('cancelled');
  expect(result.steps[0]).toMatchObject({ status: 'failed', observation: { status: 'error', code: 'CANCELLED' } });
  expect(setup.downstream.submissions).toHaveLength(1);
});

test('a worker SIGKILLed while polling: the next worker takes the call over and polls the same job, never submitting again', async () => {
  const downstream = await startJobDownstream({ doneAtPoll: 12 });
  const stores = sqliteStoresIn(workDir, 'kill');
  const taskQueue = uniqueTaskQueue('job-kill');
  const first = await spawnTestWorkerProcess(ASYNC_JOB_WORKER, taskQueue, { downstreamUrl: downstream.url, ...stores });
  const handle = await startAgentRun(temporal.client, runOf('double_by_polling', 50), { taskQueue });
  await waitFor('two polls by the first worker', () => (downstream.jobs.get('job-1')?.pollTimes.length ?? 0) >= 2);
  await killProcess(first);
  const pollsBeforeKill = downstream.jobs.get('job-1')!.pollTimes.length;

  const tools = createAsyncJobTools({ downstream: downstream.url, callbacks: 'http://127.0.0.1:9/unused' });
  const { worker, close } = await createSqliteTestWorker(temporal, taskQueue, stores, {
    tools,
    leaseMs: ASYNC_JOB_WORKER_LEASE_MS,
  });
  const result = await worker.runUntil(waitForAgentRun(handle));
  await close();
  await downstream.close();

  expect(result.status).toBe('completed');
  expect(result.steps[0]?.observation).toEqual({ status: 'ok', output: { jobId: 'job-1', doubled: 100 } });
  expect(result.steps[0]?.attempts).toBeGreaterThanOrEqual(2);
  expect(downstream.submissions).toHaveLength(1);
  expect(downstream.jobs.get('job-1')!.pollTimes.length).toBeGreaterThan(pollsBeforeKill);
});

test('cancelling a run while the model waits for a background call cancels the call and ends both steps', async () => {
  const setup = await setUp('fetch-later-run-cancel', {});
  const input: AgentRunInput = {
    goal: 'double 5',
    model: {
      provider: 'scripted',
      script: [
        { toolCalls: [{ name: 'double_in_background', arguments: { value: 5 } }] },
        { toolCalls: [{ name: 'fetch_tool_result', arguments: { handle: 'bg_1', waitSeconds: 120 } }] },
        { text: 'done', final: true },
      ],
    },
  };
  const result = await setup.worker.runUntil(async () => {
    const handle = await startAgentRun(temporal.client, input, { taskQueue: setup.taskQueue });
    await waitingCallbackUrl(setup, `${handle.workflowId}/${handle.firstExecutionRunId}`);
    await waitFor('the model waiting for the result', async () => {
      const state = await handle.query<{ steps: Array<{ stepId: number; status: string }> }>('getRunState');
      return state.steps.find((s) => s.stepId === 2)?.status === 'running';
    });
    await handle.cancel();
    return waitForAgentRun(handle);
  });
  await setup.close();

  expect(result.status).toBe('cancelled');
  expect(result.steps[0]).toMatchObject({ status: 'failed', observation: { code: 'CANCELLED' } });
  expect(result.steps[1]).toMatchObject({
    tool: 'fetch_tool_result',
    status: 'failed',
    observation: { code: 'CANCELLED' },
  });
});

test('cancelling a background call on finish runs the compensation it owes', async () => {
  const setup = await setUp('fetch-later-compensate', {});
  const input = scriptedRun(
    'reserve, then change my mind',
    [callTurn('reserve_in_background', { value: 1 }), final('no reservation after all')],
    { backgroundCalls: { onFinish: 'cancel' } },
  );
  const result = await runOnSetUp(setup, input);
  await setup.close();

  expect(result.status).toBe('completed');
  expect(result.steps[0]).toMatchObject({ tool: 'reserve_in_background', status: 'compensated' });
  expect(setup.undone).toEqual([result.steps[0]!.idempotencyKey]);
});

test('a critical tool that fails in the background aborts the run, though the model never fetched its result', async () => {
  const setup = await setUp('fetch-later-critical', {});
  const input: AgentRunInput = {
    goal: 'double 1.5, then tell me the weather',
    failurePolicy: { criticalTools: ['double_in_background'] },
    model: {
      provider: 'scripted',
      script: [
        // 1.5 is not an integer: the call fails in its activity (INVALID_ARGUMENTS), after the handle was given.
        { toolCalls: [{ name: 'double_in_background', arguments: { value: 1.5 } }] },
        { toolCalls: [{ name: 'look_up_weather', arguments: { city: 'Porto' } }] },
        { text: 'all done', final: true },
      ],
    },
  };
  const result = await runOnSetUp(setup, input);
  await setup.close();

  expect(result.status).toBe('failed');
  expect(result.reason).toContain('Step 1 (double_in_background) failed permanently with INVALID_ARGUMENTS');
  expect(result.steps[0]).toMatchObject({ tool: 'double_in_background', status: 'failed' });
  expect(setup.downstream.submissions).toHaveLength(0);
});

test('the callback endpoint answers malformed requests with structured errors and the waiting call is untouched', async () => {
  const setup = await setUp('callback-bad-requests', {});
  await setup.worker.runUntil(async () => {
    const handle = await startAgentRun(temporal.client, runOf('double_by_callback', 4), { taskQueue: setup.taskQueue });
    const url = await waitingCallbackUrl(setup, `${handle.workflowId}/${handle.firstExecutionRunId}`);
    const base = url.slice(0, url.lastIndexOf('/'));
    const send = async (target: string, init: RequestInit) => {
      const response = await fetch(target, init);
      return { status: response.status, body: (await response.json()) as { error?: { code: string } } };
    };
    expect(await send(url, { method: 'POST', body: '{"jobId": ' })).toMatchObject({
      status: 400,
      body: { error: { code: 'NOT_JSON' } },
    });
    expect(await send(url, { method: 'POST', body: 'x'.repeat(2 * 1024 * 1024) })).toMatchObject({
      status: 413,
      body: { error: { code: 'TOO_LARGE' } },
    });
    expect(await send(`${base}/%E0%A4%A`, { method: 'POST', body: '{}' })).toMatchObject({
      status: 404,
      body: { error: { code: 'INVALID_TOKEN' } },
    });
    expect(await send(url, { method: 'GET' })).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } });
    // The call still waits, and the right callback completes it.
    expect((await handle.query<{ steps: Array<{ status: string }> }>('getRunState')).steps[0]?.status).toBe('running');
    expect((await postCallback(url, { jobId: 'job-1', doubled: 8 })).status).toBe(200);
    const result = await waitForAgentRun(handle);
    expect(result.steps[0]?.observation).toEqual({ status: 'ok', output: { jobId: 'job-1', doubled: 8 } });
  });
  await setup.close();
});

test("the callback endpoint's answers name the tool and the job, never the run nor the call's idempotency key", async () => {
  const setup = await setUp('callback-answer-keys', {});
  await setup.worker.runUntil(async () => {
    const handle = await startAgentRun(temporal.client, runOf('double_by_callback', 3), { taskQueue: setup.taskQueue });
    const runKey = `${handle.workflowId}/${handle.firstExecutionRunId}`;
    const url = await waitingCallbackUrl(setup, runKey);
    const send = async (body: unknown) => {
      const response = await fetch(url, { method: 'POST', body: JSON.stringify(body) });
      return { status: response.status, text: await response.text() };
    };
    const accepted = await send({ jobId: 'job-1', doubled: 6 });
    expect(accepted.status).toBe(200);
    expect(JSON.parse(accepted.text)).toEqual({ status: 'completed', tool: 'double_by_callback', jobId: 'job-1' });
    await waitForAgentRun(handle);
    const repeated = await send({ jobId: 'job-1', doubled: 6 });
    expect(repeated.status).toBe(409);
    for (const answer of [accepted.text, repeated.text]) {
      expect(answer).not.toContain(handle.workflowId);
      expect(answer).not.toContain(handle.firstExecutionRunId);
    }
  });
  await setup.close();
});
