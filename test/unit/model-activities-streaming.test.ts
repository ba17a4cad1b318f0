/**
 * `callModel` with a stream store: every attempt writes one segment (a marker, the turn's text and tool-call
 * starts, an end), a provider that does not stream is streamed as a whole turn, and the turn returned is the
 * same as without a store, whatever the store does.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { createModelActivities, type CallModelInput } from '../../src/activities/model-activities';
import { createToolRegistry } from '../../src/tools/tool-registry';
import { MemoryStreamStore } from '../../src/stores/streams/memory-stream-store';
import type { StreamStore } from '../../src/stores/streams/stream-store';
import type { AgentStreamEvent } from '../../src/stores/streams/stream-events';
import type { ModelProvider, ModelTurn } from '../../src/contract/model-types';

const RUN_KEY = 'trip-1/first-run';
const input = (turn = 0): CallModelInput => ({
  runKey: RUN_KEY,
  goal: 'Fly me to Berlin.',
  settings: { provider: 'fake' },
  turn,
  fromIndex: 0,
  messages: [{ role: 'user', content: 'Fly me to Berlin.' }],
});

const TURN: ModelTurn = {
  text: 'Searching flights.',
  toolCalls: [{ id: 'c1', name: 'search_flights', arguments: '{"from":"LIS"}' }],
  done: false,
};

/** Streams the turn's text in pieces and the tool call's start, then returns the turn. */
const streamingProvider: ModelProvider = async (_request, context) => {
  for (const piece of ['Search', 'ing ', 'flights.']) context.stream?.text(piece);
  context.stream?.toolCallStart({ id: 'c1', name: 'search_flights' });
  return TURN;
};

function activitiesWith(provider: ModelProvider, streams?: StreamStore) {
  return createModelActivities({
    registry: createToolRegistry([]),
    providers: { fake: provider },
    ...(streams ? { streams } : {}),
  });
}

const shape = (events: AgentStreamEvent[]) =>
  events.map((e) =>
    e.type === 'text-delta' ? `text:${e.delta}` : e.type === 'tool-call-start' ? `call:${e.toolName}` : e.type,
  );

describe('callModel with a stream store', () => {
  test('writes one segment: a start marker, the text and the tool-call start, an end', async () => {
    const store = new MemoryStreamStore();
    await activitiesWith(streamingProvider, store).callModel(input());
    const events = await store.read(RUN_KEY, 1);
    expect(events.map((e) => e.type)).toEqual([
      'segment-start',
      ...events.slice(1, -2).map(() => 'text-delta'),
      'tool-call-start',
      'segment-end',
    ]);
    expect(events.map((e) => (e.type === 'text-delta' ? e.delta : '')).join('')).toBe('Searching flights.');
    expect(events[0]).toMatchObject({
      type: 'segment-start',
      restart: false,
      segment: { workflowId: 'trip-1', turn: 0, attempt: 1 },
    });
    expect(events[events.length - 1]).toMatchObject({ type: 'segment-end', outcome: 'completed' });
  });

  test('returns the same turn as without a stream store', async () => {
    const streamed = await activitiesWith(streamingProvider, new MemoryStreamStore()).callModel(input());
    const plain = await activitiesWith(streamingProvider).callModel(input());
    expect(JSON.stringify(streamed)).toBe(JSON.stringify(plain));
  });

  test('streams the turn of a provider that does not stream as a whole, when it returns', async () => {
    const store = new MemoryStreamStore();
    await activitiesWith(async () => TURN, store).callModel(input());
    expect(shape(await store.read(RUN_KEY, 1))).toEqual([
      'segment-start',
      'text:Searching flights.',
      'call:search_flights',
      'segment-end',
    ]);
  });

  test('marks the segment of a second attempt as a restart of the turn', async () => {
    const store = new MemoryStreamStore();
    const { callModel } = activitiesWith(streamingProvider, store);
    await new MockActivityEnvironment({ attempt: 2 }).run(callModel, input(3));
    expect((await store.read(RUN_KEY, 1))[0]).toMatchObject({
      type: 'segment-start',
      restart: true,
      segment: { turn: 3, attempt: 2 },
    });
  });

  test('ends the segment as failed, with the failure type, when the provider fails', async () => {
    const store = new MemoryStreamStore();
    const failing: ModelProvider = async (_request, context) => {
      context.stream?.text('Half an ans');
      throw Object.assign(new Error('overloaded'), { statusCode: 529 });
    };
    const error = await activitiesWith(failing, store)
      .callModel(input())
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApplicationFailure);
    const events = await store.read(RUN_KEY, 1);
    expect(events[events.length - 1]).toMatchObject({
      type: 'segment-end',
      outcome: 'failed',
      error: (error as ApplicationFailure).type,
    });
  });

  test('answers the turn when the stream store fails', async () => {
    const broken: StreamStore = Object.assign(new MemoryStreamStore(), {
      append: async () => Promise.reject(new Error('disk full')),
    });
    const turn = await activitiesWith(streamingProvider, broken).callModel(input());
    expect(turn.text).toBe('Searching flights.');
  });
});
