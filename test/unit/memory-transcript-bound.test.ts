import type { TranscriptMessage } from '../../src/contract/model-types';
import { MemoryTranscriptStore } from '../../src/stores/transcripts/memory-transcript-store';
import { TranscriptStoreError } from '../../src/stores/transcripts/transcript-store-error';

/**
 * The in-memory transcript store keeps at most `maxTranscriptBytes` of transcript JSON: past it the transcripts
 * of the runs used least recently are dropped (a dropped run's workflow sends its transcript again), so a worker
 * that serves run after run does not grow without end.
 */

/** A user message whose JSON is exactly `length` characters long. */
function message(length: number): TranscriptMessage {
  const empty = JSON.stringify({ role: 'user', content: '' }).length;
  return { role: 'user', content: 'x'.repeat(length - empty) };
}

test('transcripts within the bound are all kept', async () => {
  const store = new MemoryTranscriptStore({ maxTranscriptBytes: 300 });
  await store.write('a', 0, [message(100)]);
  await store.write('b', 0, [message(100)]);
  await store.write('a', 1, [message(100)]);
  expect(await store.read('a')).toHaveLength(2);
  expect(await store.read('b')).toHaveLength(1);
});

test('past the bound the run written least recently is dropped first', async () => {
  const store = new MemoryTranscriptStore({ maxTranscriptBytes: 250 });
  await store.write('a', 0, [message(100)]);
  await store.write('b', 0, [message(100)]);
  await store.write('c', 0, [message(100)]);
  expect(await store.read('a')).toBeUndefined();
  expect(await store.read('b')).toHaveLength(1);
  expect(await store.read('c')).toHaveLength(1);
});

test('a run that was read is used recently: another is dropped before it', async () => {
  const store = new MemoryTranscriptStore({ maxTranscriptBytes: 250 });
  await store.write('a', 0, [message(100)]);
  await store.write('b', 0, [message(100)]);
  await store.read('a');
  await store.write('c', 0, [message(100)]);
  expect(await store.read('a')).toHaveLength(1);
  expect(await store.read('b')).toBeUndefined();
});

test('a dropped run refuses a write that continues its transcript, so its workflow sends the whole again', async () => {
  const store = new MemoryTranscriptStore({ maxTranscriptBytes: 150 });
  await store.write('a', 0, [message(100)]);
  await store.write('b', 0, [message(100)]);
  expect(await store.write('a', 1, [message(40)])).toBe(false);
  expect(await store.write('a', 0, [message(100), message(40)])).toBe(true);
  expect(await store.read('a')).toHaveLength(2);
});

test('the run just written is kept even when it alone is over the bound', async () => {
  const store = new MemoryTranscriptStore({ maxTranscriptBytes: 50 });
  await store.write('a', 0, [message(40)]);
  await store.write('b', 0, [message(100), message(100)]);
  expect(await store.read('b')).toHaveLength(2);
  expect(await store.read('a')).toBeUndefined();
});

test('a rewritten transcript weighs only what it now holds', async () => {
  const store = new MemoryTranscriptStore({ maxTranscriptBytes: 250 });
  await store.write('a', 0, [message(100), message(100)]);
  // From message 1 on, replaced by a small one: 140 in all, so another 100 fits beside it.
  await store.write('a', 1, [message(40)]);
  await store.write('b', 0, [message(100)]);
  expect(await store.read('a')).toHaveLength(2);
  expect(await store.read('b')).toHaveLength(1);
});

test('a deleted transcript no longer counts against the bound', async () => {
  const store = new MemoryTranscriptStore({ maxTranscriptBytes: 250 });
  await store.write('a', 0, [message(200)]);
  await store.delete('a');
  await store.write('b', 0, [message(100)]);
  await store.write('c', 0, [message(100)]);
  expect(await store.read('b')).toHaveLength(1);
  expect(await store.read('c')).toHaveLength(1);
});

test.each([0, -1, Number.NaN, '1000' as unknown as number])('a bound of %p is refused with INVALID_CONFIG', (bound) => {
  expect(() => new MemoryTranscriptStore({ maxTranscriptBytes: bound })).toThrow(
    expect.objectContaining({ code: 'INVALID_CONFIG', constructor: TranscriptStoreError }) as Error,
  );
});
