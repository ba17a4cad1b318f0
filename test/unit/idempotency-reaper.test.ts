import {
  createIdempotencyReaper,
  MemoryIdempotencyStore,
  type IdempotencyReaper,
  type IdempotencyStore,
} from '../../src/stores/idempotency';

/** A store whose reap is a jest mock; nothing else is called. */
function storeWithReap(reap: () => Promise<number>): IdempotencyStore {
  return { reap: jest.fn(reap) } as unknown as IdempotencyStore;
}

describe('createIdempotencyReaper', () => {
  let reaper: IdempotencyReaper | undefined;

  afterEach(() => {
    reaper?.stop();
    reaper = undefined;
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it('reaps once per interval', async () => {
    jest.useFakeTimers();
    const store = storeWithReap(async () => 0);
    reaper = createIdempotencyReaper(store, { intervalMs: 1_000 });

    await jest.advanceTimersByTimeAsync(3_500);

    expect(store.reap).toHaveBeenCalledTimes(3);
  });

  it('reports how many records each reap deleted', async () => {
    jest.useFakeTimers();
    const counts: number[] = [];
    reaper = createIdempotencyReaper(
      storeWithReap(async () => 7),
      {
        intervalMs: 1_000,
        onReaped: (count) => counts.push(count),
      },
    );

    await jest.advanceTimersByTimeAsync(2_000);

    expect(counts).toEqual([7, 7]);
  });

  it('stops reaping after stop', async () => {
    jest.useFakeTimers();
    const store = storeWithReap(async () => 0);
    reaper = createIdempotencyReaper(store, { intervalMs: 1_000 });
    await jest.advanceTimersByTimeAsync(1_000);

    reaper.stop();
    await jest.advanceTimersByTimeAsync(5_000);

    expect(store.reap).toHaveBeenCalledTimes(1);
  });

  it('never starts a reap while the previous one is still running', async () => {
    jest.useFakeTimers();
    let finish: (count: number) => void = () => undefined;
    const store = storeWithReap(() => new Promise<number>((resolve) => (finish = resolve)));
    reaper = createIdempotencyReaper(store, { intervalMs: 1_000 });

    await jest.advanceTimersByTimeAsync(5_000);
    expect(store.reap).toHaveBeenCalledTimes(1);
    finish(0);
    await jest.advanceTimersByTimeAsync(1_000);

    expect(store.reap).toHaveBeenCalledTimes(2);
  });

  it('reports a failed reap and keeps reaping', async () => {
    jest.useFakeTimers();
    const errors: unknown[] = [];
    const store = storeWithReap(async () => {
      throw new Error('database down');
    });
    reaper = createIdempotencyReaper(store, { intervalMs: 1_000, onError: (error) => errors.push(error) });

    await jest.advanceTimersByTimeAsync(2_000);

    expect(errors).toHaveLength(2);
    expect(store.reap).toHaveBeenCalledTimes(2);
  });

  it('uses an unref-ed timer so that it never keeps the process alive', () => {
    const setIntervalSpy = jest.spyOn(global, 'setInterval');
    reaper = createIdempotencyReaper(
      storeWithReap(async () => 0),
      { intervalMs: 60_000 },
    );

    const timer = setIntervalSpy.mock.results[0]?.value as NodeJS.Timeout;

    expect(timer.hasRef()).toBe(false);
  });

  it('deletes the expired records of a real store when run once', async () => {
    let now = 0;
    const store = new MemoryIdempotencyStore({ clock: () => now, retentionMs: 1_000 });
    const outcome = await store.begin('k', 'fp', { owner: 'w', leaseMs: 100 });
    if (outcome.state !== 'started') throw new Error('expected started');
    await store.complete('k', outcome.token, 'r');
    reaper = createIdempotencyReaper(store, { intervalMs: 60_000 });
    now = 1_000;

    expect(await reaper.runOnce()).toBe(1);
  });
});
