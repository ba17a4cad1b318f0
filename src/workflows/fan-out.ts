import type { AgentRunInput } from '../contract/agent-run-types';

/*
 * The fan-out caps of a run (docs/limits.md, "Fan-out"): at most `maxToolCallsPerTurn` calls of a turn run (the
 * model activity and the turn's reading drop the rest, and the model is told: turn-reading.ts), and of those at
 * most `limits.maxConcurrentCalls` are in flight at once when the run runs a turn's calls in parallel; the others
 * queue, in the model's order, and start as earlier ones end.
 */

/** The `patched()` id of runs whose parallel calls queue past the cap; evaluated only by a turn over it. */
export const FAN_OUT_CAP_PATCH = 'durable-tools/fan-out-cap';

/** Default of `limits.maxConcurrentCalls` (measured: docs/limits.md, "Fan-out"). */
export const DEFAULT_MAX_CONCURRENT_CALLS = 8;

/** The run's cap on calls in flight at once: `limits.maxConcurrentCalls` (a positive integer) or the default. */
export function concurrentCallsCap(input: Pick<AgentRunInput, 'limits'>): number {
  const value = input.limits?.maxConcurrentCalls;
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 ? value : DEFAULT_MAX_CONCURRENT_CALLS;
}

/**
 * `Promise.allSettled` of `run` over `items`, at most `cap` at a time, started in order (so step ids, keys and
 * compensations follow the model's order as before); the outcomes in the items' order.
 */
export async function settledInPool<T, R>(
  items: readonly T[],
  cap: number,
  run: (item: T) => Promise<R>,
): Promise<PromiseSettledResult<R>[]> {
  const outcomes: PromiseSettledResult<R>[] = new Array<PromiseSettledResult<R>>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      try {
        outcomes[index] = { status: 'fulfilled', value: await run(items[index] as T) };
      } catch (reason) {
        outcomes[index] = { status: 'rejected', reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(cap, items.length) }, lane));
  return outcomes;
}
