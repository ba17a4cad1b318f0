/**
 * One probe of a provider that is down across every worker sharing an idempotency store (docs/models.md,
 * "Provider outages"): when a worker's own breaker would let a call probe the provider, the call first takes the
 * slot `model-breaker/<provider>/<model>` in the store for the probe interval. While another worker holds it (it
 * probed less than an interval ago), the call is refused as if its own breaker had refused it. A probe that gets
 * an answer frees the slot at once; one that fails keeps it until its lease runs out.
 */
import type { IdempotencyStore } from '../stores/idempotency/idempotency-store';

/** What {@link sharedProbeSlot} decides: go (with what to do after), or wait this long. */
export type ProbeSlot = { taken: true; answered(): Promise<void> } | { taken: false; retryAfterMs: number };

const FINGERPRINT = 'probe';

/**
 * Takes the shared probe slot of `key` for `intervalMs`. A store that fails does not stop the probe: the worker's
 * own breaker still holds it to one at a time.
 */
export async function sharedProbeSlot(
  store: IdempotencyStore,
  key: string,
  owner: string,
  intervalMs: number,
): Promise<ProbeSlot> {
  const slotKey = `model-breaker/${key}`;
  const free: ProbeSlot = { taken: true, answered: async () => undefined };
  const found = await store
    .begin(slotKey, FINGERPRINT, { owner, leaseMs: Math.max(1, intervalMs) })
    .catch(() => undefined);
  if (!found || found.state === 'completed' || found.state === 'failed' || found.state === 'conflict') return free;
  if (found.state === 'in_flight') return { taken: false, retryAfterMs: Math.max(1, found.retryAfterMs) };
  const { token } = found;
  return {
    taken: true,
    answered: async () => {
      await store.release(slotKey, token).catch(() => false);
    },
  };
}
