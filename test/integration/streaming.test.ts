/**
 * Streaming to the user on the real dev server: the real OpenAI provider streams a turn from the fake model
 * server's SSE chunks, the worker publishes it to a SQLite stream store, and `streamAgentRun` reads it from
 * another connection to that file, as another process would.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { startAgentRun, waitForAgentRun, type AgentRunHandle } from '../../src/client/agent-run-client';
import { streamAgentRun } from '../../src/client/stream-agent-run';
import { streamTurnTexts } from '../../src/client/stream-turn-texts';
import { startAgentRunStreamServer } from '../../src/client/agent-run-stream-server';
import { createConfiguredModelProvider, type ModelProviderKind } from '../../src/model/configured-model-providers';
import { z } from 'zod';
import { defineTool, type Tool } from '../../src/tools/define-tool';
import { SqliteStreamStore } from '../../src/stores/streams/sqlite-stream-store';
import type { AgentStreamEvent } from '../../src/stores/streams/stream-events';
import type { AgentRunResult } from '../../src/contract/agent-run-types';
import { startFakeModelServer, type FakeModelServer } from '../support/fake-model-server';
import { createRecordingTools } from '../support/test-tools';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { killProcess, spawnTestWorkerProcess } from '../support/worker-process';
import { STREAM_WORKER } from '../support/stream-worker';
import { waitFor } from '../support/wait-for';
import { createServer } from 'node:http';
import type { Browser } from 'playwright-core';
import { describeWithBrowser } from '../support/browser';
import { launchChromium } from '../support/ui-dev-server';
import { closeHttpServer, listenOnFreePort } from '../support/local-server';

const temporal = useTestTemporal();
let server: FakeModelServer;
let dir: string;
beforeEach(async () => {
  server = await startFakeModelServer();
  dir = mkdtempSync(join(tmpdir(), 'dt-streaming-'));
});
afterEach(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const ANSWER =
  'Your flight FR2381 leaves Lisbon at 06:10 on 18 December and lands in Berlin at 10:45; the hotel is booked for three nights.';
const FIRST_TURN = 'Adding the two numbers first.';

/** Turn 1: text and a call of `add`; turn 2: the answer. */
function twoTurns(answer = ANSWER): void {
  server.enqueue(
    { kind: 'turn', text: FIRST_TURN, toolCalls: [{ name: 'add', arguments: '{"a":2,"b":3}' }], chunkChars: 3 },
    { kind: 'turn', text: answer, chunkChars: 3 },
  );
}

/** One turn answering ANSWER that pauses after 5 chunks until the returned function is called. */
function pausedAnswer(): () => void {
  let resume: () => void = () => {};
  const resumed = new Promise<void>((resolve) => (resume = resolve));
  server.enqueue({ kind: 'turn', text: ANSWER, chunkChars: 2, pauseAfterChunks: 5, resume: resumed });
  return resume;
}

/** Starts a run of the OpenAI provider (the fake server's next turns) on `taskQueue`. */
function startAnswerRun(taskQueue: string): Promise<AgentRunHandle> {
  return startAgentRun(temporal.client, { goal: 'Answer.', model: { provider: 'openai' } }, { taskQueue });
}

/** Runs `body` with a worker whose model is the OpenAI provider against the fake server, streaming to `streams`. */
async function withWorker<T>(
  name: string,
  streams: SqliteStreamStore | undefined,
  body: (taskQueue: string) => Promise<T>,
  kind: ModelProviderKind = 'openai',
  tools: Tool[] = createRecordingTools().tools,
): Promise<T> {
  const taskQueue = uniqueTaskQueue(name);
  const provider = await createConfiguredModelProvider({
    kind,
    baseURL: server.baseURL,
    apiKey: 'k',
    model: 'test-model',
  });
  const worker = await createTestWorker(temporal, {
    tools,
    taskQueue,
    modelProviders: { [kind]: provider },
    ...(streams ? { streams } : {}),
  });
  return worker.runUntil(() => body(taskQueue));
}

async function readAll(iterable: AsyncIterable<AgentStreamEvent>): Promise<AgentStreamEvent[]> {
  const events: AgentStreamEvent[] = [];
  for await (const event of iterable) events.push(event);
  return events;
}

interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/** Reads server-sent events as a browser's EventSource would, until `last(event)` (then it disconnects). */
async function readSse(
  url: string,
  headers: Record<string, string>,
  last: (event: SseEvent) => boolean,
): Promise<SseEvent[]> {
  const abort = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const events: SseEvent[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event: SseEvent = { data: '' };
        for (const line of block.split('\n')) {
          const [field, ...rest] = line.split(': ');
          const value = rest.join(': ');
          if (field === 'id') event.id = value;
          else if (field === 'event') event.event = value;
          else if (field === 'data') event.data = value;
        }
        if (event.event === undefined && event.id === undefined) continue; // retry: and keep-alive comments
        events.push(event);
        if (last(event)) return events;
      }
    }
  } finally {
    abort.abort();
  }
  return events;
}

function openStore(): SqliteStreamStore {
  return new SqliteStreamStore({ path: join(dir, 'streams.sqlite') });
}

describe('streaming a run', () => {
  test.each<ModelProviderKind>(['openai', 'anthropic', 'openai-compatible'])(
    'with the %s provider, a stream read to the end holds the recorded turns: the first with its tool call, then the answer',
    async (kind) => {
      twoTurns();
      const workerStore = openStore();
      const readerStore = openStore();
      try {
        const { result, events } = await withWorker(
          `stream-end-${kind}`,
          workerStore,
          async (taskQueue) => {
            const handle = await startAgentRun(
              temporal.client,
              { goal: 'Add 2 and 3.', model: { provider: kind } },
              { taskQueue },
            );
            const reading = readAll(streamAgentRun(temporal.client, handle.workflowId, { store: readerStore }));
            return { result: await waitForAgentRun(handle), events: await reading };
          },
          kind,
        );
        expect(result.status).toBe('completed');
        const texts = streamTurnTexts(events);
        expect(texts.get(0)).toBe(FIRST_TURN);
        expect(texts.get(1)).toBe(result.answer);
        expect(result.answer).toBe(ANSWER);
        expect(events.filter((e) => e.type === 'text-delta').length).toBeGreaterThan(10);
        expect(
          events.filter((e) => e.type === 'tool-call-start').map((e) => e.type === 'tool-call-start' && e.toolName),
        ).toEqual(['add']);
        expect(events.map((e) => e.offset)).toEqual(events.map((_, i) => i + 1));
        expect(server.requests.every((request) => request.body.stream === true)).toBe(true);
      } finally {
        await workerStore.close();
        await readerStore.close();
      }
    },
  );

  test('the history of a streamed run has the same events as that of the same run without streaming', async () => {
    const eventTypes = async (
      streams: SqliteStreamStore | undefined,
    ): Promise<{ types: string[]; result: AgentRunResult }> => {
      twoTurns();
      return withWorker('stream-history', streams, async (taskQueue) => {
        const handle = await startAgentRun(
          temporal.client,
          { goal: 'Add 2 and 3.', model: { provider: 'openai' } },
          { taskQueue },
        );
        const result = await waitForAgentRun(handle);
        const history = await handle.fetchHistory();
        return { result, types: (history.events ?? []).map((event) => String(event.eventType)) };
      });
    };
    const store = openStore();
    try {
      const streamed = await eventTypes(store);
      const plain = await eventTypes(undefined);
      expect(streamed.types).toEqual(plain.types);
      expect(streamed.result.answer).toBe(plain.result.answer);
    } finally {
      await store.close();
    }
  });

  test('a reader that disconnects mid-turn resumes from its next offset without gaps or duplicates', async () => {
    const resume = pausedAnswer();
    const workerStore = openStore();
    const readerStore = openStore();
    try {
      const { first, second, result } = await withWorker('stream-resume', workerStore, async (taskQueue) => {
        const handle = await startAnswerRun(taskQueue);
        const first: AgentStreamEvent[] = [];
        for await (const event of streamAgentRun(temporal.client, handle.workflowId, { store: readerStore })) {
          first.push(event);
          if (event.type === 'text-delta') break; // the reader goes away mid-turn
        }
        resume();
        const from = first[first.length - 1]!.offset + 1;
        const second = await readAll(streamAgentRun(temporal.client, handle.workflowId, { store: readerStore, from }));
        return { first, second, result: await waitForAgentRun(handle) };
      });
      const all = [...first, ...second];
      expect(all.map((e) => e.offset)).toEqual(all.map((_, i) => i + 1));
      expect(second.length).toBeGreaterThan(0);
      expect(streamTurnTexts(all).get(0)).toBe(result.answer);
      expect(all[all.length - 1]).toMatchObject({ type: 'segment-end', outcome: 'completed' });
    } finally {
      await workerStore.close();
      await readerStore.close();
    }
  });

  test('over SSE, a client that reconnects with Last-Event-ID gets the rest of the stream and an end event', async () => {
    const resume = pausedAnswer();
    const workerStore = openStore();
    const readerStore = openStore();
    const sse = await startAgentRunStreamServer({ client: temporal.client, store: readerStore, port: 0 });
    try {
      const { first, second, result } = await withWorker('stream-sse', workerStore, async (taskQueue) => {
        const handle = await startAnswerRun(taskQueue);
        const url = `${sse.url}/runs/${encodeURIComponent(handle.workflowId)}/stream`;
        const first = await readSse(url, {}, (event) => event.event === 'text-delta');
        resume();
        const lastId = first[first.length - 1]!.id!;
        const second = await readSse(url, { 'last-event-id': lastId }, (event) => event.event === 'end');
        return { first, second, result: await waitForAgentRun(handle) };
      });
      const events = [...first, ...second].filter((e) => e.event !== 'end');
      expect(events.map((e) => Number(e.id))).toEqual(events.map((_, i) => i + 1));
      const parsed = events.map((e) => JSON.parse(e.data) as AgentStreamEvent);
      expect(parsed.map((e) => e.type)).toEqual(events.map((e) => e.event));
      expect(streamTurnTexts(parsed).get(0)).toBe(result.answer);
      expect(second[second.length - 1]?.event).toBe('end');
    } finally {
      await sse.close();
      await workerStore.close();
      await readerStore.close();
    }
  });

  test('over SSE, a run that does not exist is a 404', async () => {
    const store = openStore();
    const sse = await startAgentRunStreamServer({ client: temporal.client, store, port: 0 });
    try {
      const response = await fetch(`${sse.url}/runs/no-such-run/stream`);
      expect(response.status).toBe(404);
    } finally {
      await sse.close();
      await store.close();
    }
  });

  test('the progress a running tool call reports reaches the stream with its step', async () => {
    const crunch = defineTool({
      name: 'crunch',
      description: 'Crunches a batch, unit by unit.',
      input: z.object({ units: z.number().int().min(1) }),
      output: z.object({ crunched: z.number() }),
      effect: 'read-only',
      idempotent: true,
      longCall: { heartbeatTimeout: '30 s', deadline: '5 min' },
    }).implement(async ({ units }, ctx) => {
      for (let unit = 0; unit < units; unit += 1) ctx.progress(((unit + 1) / units) * 100, `unit ${unit + 1}`);
      return { crunched: units };
    });
    server.enqueue(
      { kind: 'turn', toolCalls: [{ name: 'crunch', arguments: '{"units":4}' }] },
      { kind: 'turn', text: 'Crunched.' },
    );
    const workerStore = openStore();
    const readerStore = openStore();
    try {
      const events = await withWorker(
        'stream-progress',
        workerStore,
        async (taskQueue) => {
          const handle = await startAgentRun(
            temporal.client,
            { goal: 'Crunch.', model: { provider: 'openai' } },
            { taskQueue },
          );
          await waitForAgentRun(handle);
          return readAll(streamAgentRun(temporal.client, handle.workflowId, { store: readerStore }));
        },
        'openai',
        [crunch],
      );
      const progress = events.filter((e) => e.type === 'tool-progress');
      expect(progress.map((e) => e.type === 'tool-progress' && [e.stepId, e.tool, e.percent, e.message])).toEqual([
        [1, 'crunch', 25, 'unit 1'],
        [1, 'crunch', 50, 'unit 2'],
        [1, 'crunch', 75, 'unit 3'],
        [1, 'crunch', 100, 'unit 4'],
      ]);
    } finally {
      await workerStore.close();
      await readerStore.close();
    }
  });

  test('a worker killed mid-turn leaves a segment the next attempt replaces with a marked new segment', async () => {
    const streamsPath = join(dir, 'streams.sqlite');
    const settings = {
      keysPath: join(dir, 'keys.sqlite'),
      transcriptsPath: join(dir, 'transcripts.sqlite'),
      modelUrl: server.baseURL,
      streamsPath,
    };
    const taskQueue = uniqueTaskQueue('stream-kill');
    server.enqueue(
      {
        kind: 'turn',
        text: 'The first attempt starts an answer it will never finish',
        chunkChars: 4,
        stallAfterChunks: 3,
      },
      { kind: 'turn', text: ANSWER, chunkChars: 4 },
    );
    const reader = new SqliteStreamStore({ path: streamsPath });
    let worker: ChildProcess | undefined = await spawnTestWorkerProcess(STREAM_WORKER, taskQueue, settings);
    try {
      const handle = await startAnswerRun(taskQueue);
      const stream = `${handle.workflowId}/${handle.firstExecutionRunId}`;
      await waitFor('the first attempt to stream some text', async () =>
        (await reader.read(stream, 1)).some((e) => e.type === 'text-delta'),
      );
      await killProcess(worker);
      worker = await spawnTestWorkerProcess(STREAM_WORKER, taskQueue, settings);
      const result = await waitForAgentRun(handle);
      const events = await readAll(streamAgentRun(temporal.client, handle.workflowId, { store: reader }));
      const starts = events.filter((e) => e.type === 'segment-start');
      expect(starts.map((e) => e.type === 'segment-start' && [e.segment.turn, e.segment.attempt, e.restart])).toEqual([
        [0, 1, false],
        [0, 2, true],
      ]);
      const ends = events.filter((e) => e.type === 'segment-end');
      expect(ends.map((e) => e.type === 'segment-end' && [e.segment.attempt, e.outcome])).toEqual([[2, 'completed']]);
      const secondStart = events.indexOf(starts[1]!);
      const afterRestart = events
        .slice(secondStart)
        .map((e) => (e.type === 'text-delta' ? e.delta : ''))
        .join('');
      expect(afterRestart).toBe(result.answer);
      expect(streamTurnTexts(events).get(0)).toBe(result.answer);
      expect(events.map((e) => e.offset)).toEqual(events.map((_, i) => i + 1));
    } finally {
      if (worker) await killProcess(worker);
      await reader.close();
    }
  });
});

describeWithBrowser('streaming a run to a browser', (chromiumPath) => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium(chromiumPath);
  });
  afterAll(async () => {
    await browser?.close();
  });

  test("a page's EventSource reads the run's text, reconnects by itself with Last-Event-ID, and stops at the end", async () => {
    const resume = pausedAnswer();
    const page = createServer((_request, response) =>
      response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>chat</title>'),
    );
    const pagePort = await listenOnFreePort(page);
    const origin = `http://127.0.0.1:${pagePort}`;
    const workerStore = openStore();
    const readerStore = openStore();
    let sse = await startAgentRunStreamServer({
      client: temporal.client,
      store: readerStore,
      port: 0,
      corsOrigins: [origin],
    });
    const ssePort = sse.port;
    const tab = await browser.newPage();
    try {
      const result = await withWorker('stream-browser', workerStore, async (taskQueue) => {
        const handle = await startAnswerRun(taskQueue);
        await tab.goto(origin);
        await tab.evaluate(
          (url) => {
            const seen: { id: string; type: string; data: string }[] = [];
            (globalThis as unknown as { seen: typeof seen }).seen = seen;
            const source = new EventSource(url);
            for (const type of ['segment-start', 'text-delta', 'tool-call-start', 'segment-end']) {
              source.addEventListener(type, (e) =>
                seen.push({ id: (e as MessageEvent).lastEventId, type, data: (e as MessageEvent).data }),
              );
            }
            source.addEventListener('end', () => {
              seen.push({ id: '', type: 'end', data: '' });
              source.close();
            });
          },
          `${sse.url}/runs/${encodeURIComponent(handle.workflowId)}/stream`,
        );
        const seenCount = (type: string) =>
          tab.evaluate(
            (t) => (globalThis as unknown as { seen: { type: string }[] }).seen.filter((e) => e.type === t).length,
            type,
          );
        await waitFor('the page to get a text delta', async () => (await seenCount('text-delta')) > 0);
        // The server goes away mid-turn and comes back on the same port: the browser reconnects on its own.
        await sse.close();
        sse = await startAgentRunStreamServer({
          client: temporal.client,
          store: readerStore,
          port: ssePort,
          corsOrigins: [origin],
        });
        resume();
        await waitFor('the page to get the end event', async () => (await seenCount('end')) > 0);
        return waitForAgentRun(handle);
      });
      const seen = await tab.evaluate(
        () => (globalThis as unknown as { seen: { id: string; type: string; data: string }[] }).seen,
      );
      const events = seen.filter((e) => e.type !== 'end').map((e) => JSON.parse(e.data) as AgentStreamEvent);
      expect(seen.filter((e) => e.type !== 'end').map((e) => Number(e.id))).toEqual(events.map((_, i) => i + 1));
      expect(streamTurnTexts(events).get(0)).toBe(result.answer);
    } finally {
      await tab.close();
      await sse.close();
      await closeHttpServer(page);
      await workerStore.close();
      await readerStore.close();
    }
  });
});
