import { sharedProbeSlot } from '../../src/activities/shared-probe-slot';
import { MemoryIdempotencyStore } from '../../src/stores/idempotency/memory-idempotency-store';

const KEY = 'openai/gpt-test';

describe('the probe slot workers share through the store', () => {
  test('while one worker probes a provider that is down, another worker does not probe it', async () => {
    let now = 0;
    const store = new MemoryIdempotencyStore({ clock: () => now });
    expect(await sharedProbeSlot(store, KEY, 'worker-a', 5_000)).toMatchObject({ taken: true });
    now = 1_000;
    expect(await sharedProbeSlot(store, KEY, 'worker-b', 5_000)).toEqual({ taken: false, retryAfterMs: 4_000 });
  });

  test('a failed probe holds the slot for the interval; then the next worker probes', async () => {
    let now = 0;
    const store = new MemoryIdempotencyStore({ clock: () => now });
    await sharedProbeSlot(store, KEY, 'worker-a', 5_000);
    now = 5_001;
    expect(await sharedProbeSlot(store, KEY, 'worker-b', 5_000)).toMatchObject({ taken: true });
  });

  test('a probe that got an answer frees the slot at once', async () => {
    const store = new MemoryIdempotencyStore({ clock: () => 0 });
    const probe = await sharedProbeSlot(store, KEY, 'worker-a', 5_000);
    if (probe.taken) await probe.answered();
    expect(await sharedProbeSlot(store, KEY, 'worker-b', 5_000)).toMatchObject({ taken: true });
  });

  test('each provider and model has its own slot', async () => {
    const store = new MemoryIdempotencyStore({ clock: () => 0 });
    await sharedProbeSlot(store, KEY, 'worker-a', 5_000);
    expect(await sharedProbeSlot(store, 'openai/other', 'worker-b', 5_000)).toMatchObject({ taken: true });
  });
});
