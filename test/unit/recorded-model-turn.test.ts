import type { CallModelInput } from '../../src/activities/model-activities';
import { createRecordedModelActivities } from '../../src/activities/recorded-model-turn';
import type { ModelTurn } from '../../src/contract/model-types';
import { MemoryIdempotencyStore } from '../../src/stores/idempotency/memory-idempotency-store';

const request: CallModelInput = {
  runKey: 'run-1/first',
  goal: 'Pay.',
  settings: { provider: 'scripted' },
  turn: 0,
  fromIndex: 0,
  messages: [],
};
const turnKey = 'run-1/exec-1/turn/1';
const answer = (text: string): ModelTurn => ({ text, toolCalls: [], done: true });

test('the model is asked once per turn key: a repeated call returns the recorded turn', async () => {
  const callModel = jest.fn(async () => answer('first'));
  const { callModelOnce } = createRecordedModelActivities({ callModel, store: new MemoryIdempotencyStore() });

  const first = await callModelOnce({ ...request, turnKey });
  const again = await callModelOnce({ ...request, turnKey });

  expect([first.text, again.text]).toEqual(['first', 'first']);
  expect(callModel).toHaveBeenCalledTimes(1);
});

test('another turn key (another execution of the same workflow id) asks the model again', async () => {
  const callModel = jest.fn(async () => answer('x'));
  const { callModelOnce } = createRecordedModelActivities({ callModel, store: new MemoryIdempotencyStore() });

  await callModelOnce({ ...request, turnKey });
  await callModelOnce({ ...request, turnKey: 'run-1/exec-2/turn/1' });

  expect(callModel).toHaveBeenCalledTimes(2);
});

test('of two attempts racing on one turn, both return the answer recorded first', async () => {
  let releaseSlow!: () => void;
  const slowGate = new Promise<void>((resolve) => (releaseSlow = resolve));
  const answers = [
    async () => {
      await slowGate;
      return answer('slow');
    },
    async () => answer('fast'),
  ];
  const callModel = jest.fn(() => answers.shift()!());
  const { callModelOnce } = createRecordedModelActivities({ callModel, store: new MemoryIdempotencyStore() });

  const slow = callModelOnce({ ...request, turnKey });
  await new Promise((resolve) => setTimeout(resolve, 20)); // the slow attempt's 1 ms claim has run out
  const fast = await callModelOnce({ ...request, turnKey });
  releaseSlow();

  expect([(await slow).text, fast.text]).toEqual(['fast', 'fast']);
});

test('a failed turn is not recorded: the next attempt asks the model again', async () => {
  const callModel = jest
    .fn<Promise<ModelTurn>, [CallModelInput]>()
    .mockRejectedValueOnce(new Error('429'))
    .mockResolvedValueOnce(answer('after the retry'));
  const { callModelOnce } = createRecordedModelActivities({ callModel, store: new MemoryIdempotencyStore() });

  await expect(callModelOnce({ ...request, turnKey })).rejects.toThrow('429');
  const retried = await callModelOnce({ ...request, turnKey });

  expect(retried.text).toBe('after the retry');
});

/** The store's writes, counted, on a memory store. */
function countingStore() {
  const store = new MemoryIdempotencyStore();
  const writes = { begin: 0, complete: 0, insertIfAbsent: 0 };
  for (const name of Object.keys(writes) as (keyof typeof writes)[]) {
    const original = (store[name] as (...args: unknown[]) => Promise<unknown>).bind(store);
    (store as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      writes[name] += 1;
      return original(...args);
    };
  }
  return { store, writes };
}

test('a turn is recorded in one write (insert if absent), with no claim and no completion', async () => {
  const { store, writes } = countingStore();
  const { callModelOnce } = createRecordedModelActivities({ callModel: async () => answer('one'), store });

  await callModelOnce({ ...request, turnKey });
  await callModelOnce({ ...request, turnKey });

  expect(writes).toEqual({ begin: 0, complete: 0, insertIfAbsent: 1 });
});

/** A store that has only the claim and completion calls, as a store written before insertIfAbsent. */
function storeWithoutInsert(): MemoryIdempotencyStore {
  const store = new MemoryIdempotencyStore();
  Object.assign(store, { lookup: undefined, insertIfAbsent: undefined });
  return store;
}

test('a store without insertIfAbsent records the turn by claim and completion: asked once per key', async () => {
  const callModel = jest.fn(async () => answer('claimed'));
  const { callModelOnce } = createRecordedModelActivities({ callModel, store: storeWithoutInsert() });

  const first = await callModelOnce({ ...request, turnKey });
  const again = await callModelOnce({ ...request, turnKey });

  expect([first.text, again.text]).toEqual(['claimed', 'claimed']);
  expect(callModel).toHaveBeenCalledTimes(1);
});

test('a turn claimed by a worker that records with claim and completion is waited for, then replayed', async () => {
  const store = new MemoryIdempotencyStore();
  const claim = await store.begin(turnKey, 'model-turn', { owner: 'older-worker', leaseMs: 200 });
  if (claim.state !== 'started') throw new Error(claim.state);
  const callModel = jest.fn(async () => answer('asked again'));
  const { callModelOnce } = createRecordedModelActivities({ callModel, store });

  const waiting = callModelOnce({ ...request, turnKey });
  await store.complete(turnKey, claim.token, answer('older'));

  expect((await waiting).text).toBe('older');
  expect(callModel).not.toHaveBeenCalled();
});
