import { settledInPool } from '../../src/workflows/fan-out';

describe('the fan-out pool', () => {
  test('runs at most cap items at once, starts them in order and settles each in its place', async () => {
    let inFlight = 0;
    let most = 0;
    const started: number[] = [];
    const outcomes = await settledInPool([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      started.push(n);
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 10 * (8 - n)));
      inFlight -= 1;
      if (n === 4) throw new Error('four');
      return n * 10;
    });
    expect(most).toBe(3);
    expect(started).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message))).toEqual([
      10,
      20,
      30,
      'four',
      50,
      60,
      70,
    ]);
  });
});
