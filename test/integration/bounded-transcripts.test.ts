import { z } from 'zod';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import type { ModelProvider, TranscriptMessage } from '../../src/contract/model-types';
import { MemoryIdempotencyStore } from '../../src/stores/idempotency/memory-idempotency-store';
import { MemoryTranscriptStore } from '../../src/stores/transcripts/memory-transcript-store';
import { defineTool } from '../../src/tools/define-tool';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';

/*
 * A worker whose in-memory transcript store keeps one run's transcript at a time (`maxTranscriptBytes: 1`): two
 * runs that take their turns together drop each other's transcript at every turn. Each run's workflow then sends
 * its transcript again, so every turn still sees the whole conversation and both runs end as they would with an
 * unbounded store, on regular activities and on the fast path.
 */

const STEPS = 3;
const taskQueue = uniqueTaskQueue('bounded-transcripts');

/** Counts the writes it refused: a run's transcript that had been dropped. */
class CountingStore extends MemoryTranscriptStore {
  refused = 0;
  override async write(runKey: string, fromIndex: number, messages: readonly TranscriptMessage[]): Promise<boolean> {
    const written = await super.write(runKey, fromIndex, messages);
    if (!written) this.refused += 1;
    return written;
  }
}
const transcripts = new CountingStore({ maxTranscriptBytes: 1 });

/** The length of the transcript each run's model was sent, by goal, one entry per model call. */
const seen = new Map<string, number[]>();
/** How many runs have asked each turn, by `<pair>/<turn>`; each waits until both have. */
const arrived = new Map<string, number>();
const waiting = new Map<string, Array<() => void>>();

/** Resolves once both runs of a pair have asked this turn, so they take it together. */
async function together(meeting: string): Promise<void> {
  const count = (arrived.get(meeting) ?? 0) + 1;
  arrived.set(meeting, count);
  if (count >= 2) {
    for (const release of waiting.get(meeting) ?? []) release();
    return;
  }
  await new Promise<void>((resolve) => waiting.set(meeting, [...(waiting.get(meeting) ?? []), resolve]));
}

/** Calls `note` at turns 0 to STEPS-1, then answers; the two runs of a pair take each turn together. */
const pairedModel: ModelProvider = async ({ goal, turn, transcript }) => {
  seen.set(goal, [...(seen.get(goal) ?? []), transcript.length]);
  await together(`${goal.split(':')[0]}/${turn}`);
  if (turn >= STEPS) return { text: `${goal} is done`, toolCalls: [], done: true };
  return { toolCalls: [{ id: `call-${turn}`, name: 'note', arguments: { n: turn } }], done: false };
};

const noteTool = defineTool({
  name: 'note',
  description: 'Notes a number.',
  input: z.object({ n: z.number() }),
  output: z.object({ noted: z.number() }),
  effect: 'read-only',
  idempotent: true,
}).implement(async ({ n }) => ({ noted: n }));

const temporal = useTestTemporal({
  worker: (temporal) =>
    createTestWorker(temporal, {
      tools: [noteTool],
      taskQueue,
      idempotencyStore: new MemoryIdempotencyStore(),
      transcripts,
      modelProviders: { paired: pairedModel },
    }),
});

/** Runs two runs of `pair` at once to their end. */
async function runPair(pair: string, fastPath: boolean) {
  const handles = await Promise.all(
    ['first', 'second'].map((name) =>
      startAgentRun(
        temporal.client,
        {
          goal: `${pair}:${name}`,
          model: { provider: 'paired' } as never,
          limits: { maxSteps: STEPS, maxTurns: STEPS + 1 },
          ...(fastPath ? { fastPath: true } : {}),
        },
        { taskQueue },
      ),
    ),
  );
  return Promise.all(handles.map((handle) => waitForAgentRun(handle)));
}

test.each([
  ['regular activities', 'regular', false],
  ['the fast path', 'fast', true],
])('with %s, runs whose transcripts drop each other end as with an unbounded store', async (_name, pair, fast) => {
  const refusedBefore = transcripts.refused;
  const results = await runPair(pair, fast);
  expect(results.map((result) => [result.status, result.stepCount, result.answer])).toEqual([
    ['completed', STEPS, `${pair}:first is done`],
    ['completed', STEPS, `${pair}:second is done`],
  ]);
  // The stores did drop them: the workflows had to send their transcripts again.
  expect(transcripts.refused).toBeGreaterThan(refusedBefore);
  // Every turn saw the whole conversation: the goal, then an assistant message and a tool result per step.
  for (const name of ['first', 'second']) {
    expect(seen.get(`${pair}:${name}`)).toEqual(Array.from({ length: STEPS + 1 }, (_, turn) => 1 + 2 * turn));
  }
});
