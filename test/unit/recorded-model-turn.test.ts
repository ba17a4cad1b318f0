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
