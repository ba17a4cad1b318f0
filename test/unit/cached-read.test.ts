import { z } from 'zod';
import { cachedRead } from '../../src/activities/cached-read';
import { MemoryIdempotencyStore } from '../../src/stores/idempotency/memory-idempotency-store';
import { defineTool } from '../../src/tools/define-tool';

const weather = defineTool({
  name: 'get_weather',
  description: 'The weather in a city.',
  input: z.object({ city: z.string() }),
  output: z.object({ sky: z.string() }),
  effect: 'read-only',
  cache: { ttl: 60_000, key: ({ city }: { city: string }) => city.toLowerCase() },
}).implement(async () => ({ sky: 'clear' }));

function downstream() {
  const asked: string[] = [];
  return {
    asked,
    call: (city: string) => async () => {
      asked.push(city);
      return { output: { sky: `clear over ${city}` }, attempt: 1 };
    },
  };
}

describe('a cached read', () => {
  test('within its ttl the same key is answered from the store, marked cached, without asking', async () => {
    let now = 0;
    const store = new MemoryIdempotencyStore({ clock: () => now });
    const { asked, call } = downstream();
    const settings = { store, owner: 'w', skip: false };
    const first = await cachedRead(weather, { city: 'Lisbon' }, settings, call('Lisbon'));
    now = 59_000;
    const second = await cachedRead(weather, { city: 'LISBON' }, settings, call('LISBON'));
    expect(first).toEqual({ output: { sky: 'clear over Lisbon' }, attempt: 1 });
    expect(second).toEqual({ output: { sky: 'clear over Lisbon' }, attempt: 1, cached: true });
    expect(asked).toEqual(['Lisbon']);
  });

  test('past its ttl the read is asked again', async () => {
    let now = 0;
    const store = new MemoryIdempotencyStore({ clock: () => now });
    const { asked, call } = downstream();
    const settings = { store, owner: 'w', skip: false };
    await cachedRead(weather, { city: 'Lisbon' }, settings, call('Lisbon'));
    now = 61_000;
    const again = await cachedRead(weather, { city: 'Lisbon' }, settings, call('Lisbon'));
    expect(again.cached).toBeUndefined();
    expect(asked).toEqual(['Lisbon', 'Lisbon']);
  });

  test('a failed read caches nothing: the next call asks again', async () => {
    const store = new MemoryIdempotencyStore();
    const { asked, call } = downstream();
    const settings = { store, owner: 'w', skip: false };
    await expect(
      cachedRead(weather, { city: 'Porto' }, settings, async () => Promise.reject(new Error('down'))),
    ).rejects.toThrow('down');
    await cachedRead(weather, { city: 'Porto' }, settings, call('Porto'));
    expect(asked).toEqual(['Porto']);
  });

  test('a compensation or a dry run never reads the cache', async () => {
    const store = new MemoryIdempotencyStore();
    const { asked, call } = downstream();
    await cachedRead(weather, { city: 'Oslo' }, { store, owner: 'w', skip: false }, call('Oslo'));
    await cachedRead(weather, { city: 'Oslo' }, { store, owner: 'w', skip: true }, call('Oslo'));
    expect(asked).toEqual(['Oslo', 'Oslo']);
  });
});
