import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { combinedSignal } from '../../src/activities/combined-signal';

/**
 * The signal the model and tool activities give a provider or a tool: it aborts with the first source's reason, and
 * a listener a provider leaves on it does not keep the call's memory alive (what `AbortSignal.any` did).
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

test('aborts with the reason of the first source that aborts, and only once', () => {
  const cancellation = new AbortController();
  const deadline = new AbortController();
  const { signal } = combinedSignal([cancellation.signal, deadline.signal]);
  const seen: unknown[] = [];
  signal.addEventListener('abort', () => seen.push(signal.reason));
  expect(signal.aborted).toBe(false);
  deadline.abort('deadline');
  cancellation.abort('cancelled');
  expect(seen).toEqual(['deadline']);
});

test('a source already aborted aborts it at once', () => {
  const done = new AbortController();
  done.abort('gone');
  const { signal } = combinedSignal([new AbortController().signal, done.signal]);
  expect(signal.aborted).toBe(true);
  expect(signal.reason).toBe('gone');
});

test('after dispose, the sources no longer abort it', () => {
  const source = new AbortController();
  const combined = combinedSignal([source.signal]);
  combined.dispose();
  source.abort('late');
  expect(combined.signal.aborted).toBe(false);
});

/** Makes 50 calls' signals, each with a listener its call leaves on it; returns how many call states are alive. */
function leaveListeners(sources: () => AbortSignal[], afterCall: (dispose: () => void) => void): () => number {
  const held: Array<WeakRef<object>> = [];
  for (let i = 0; i < 50; i++) {
    const { signal, dispose } = combinedSignal(sources());
    const callState = { bytes: new Array<number>(1_000).fill(i) };
    signal.addEventListener('abort', () => callState.bytes.length, { once: true });
    held.push(new WeakRef(callState));
    afterCall(dispose);
  }
  return () => held.filter((ref) => ref.deref() !== undefined).length;
}

async function collectedAll(alive: () => number): Promise<number> {
  while (alive() > 0) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    gc();
  }
  return alive();
}

test("a listener left on it does not keep the call's memory once the call's sources are gone", async () => {
  // The activity's cancellation and the call's deadline: both end with the call (AbortSignal.any kept them all).
  const alive = leaveListeners(
    () => [new AbortController().signal, new AbortController().signal],
    () => undefined,
  );
  expect(await collectedAll(alive)).toBe(0);
});

test('a source that lives on lets go of the calls disposed', async () => {
  const worker = new AbortController();
  const alive = leaveListeners(
    () => [worker.signal, new AbortController().signal],
    (dispose) => dispose(),
  );
  expect(await collectedAll(alive)).toBe(0);
});
