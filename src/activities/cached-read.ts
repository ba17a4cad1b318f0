/**
 * Cached reads (docs/tools.md, "Cached reads"): a read-only tool that declares `cache: { ttl, key? }` has its
 * answers kept in the worker's idempotency store under `tool-cache/<tool>/<digest of the key>` for `ttl`
 * (the record's own retention), so every run and worker using that store gets the answer without reaching the
 * downstream again. Only answers kept inline are shared: a large output is a claim check owned by its run.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { ToolActivityResult } from '../contract/tool-activity-types';
import { isStoredOutputReference } from '../contract/claim-check-reference';
import type { IdempotencyStore } from '../stores/idempotency/idempotency-store';
import { fingerprint } from '../stores/idempotency/canonical-json';
import type { Tool } from '../tools/define-tool';

/** How long a read being answered by another caller is waited for before this one asks the downstream itself. */
const IN_FLIGHT_POLL_MS = 200;

/** The store key and fingerprint of a cached read, or undefined when the key function fails or is not JSON. */
function cacheKeyOf(tool: Tool, validated: unknown): { key: string; digest: string } | undefined {
  try {
    const pick = (tool.contract.spec.cache as { key?: (args: unknown) => unknown } | undefined)?.key;
    const digest = fingerprint(pick ? pick(validated) : validated);
    return { key: `tool-cache/${tool.contract.name}/${digest}`, digest };
  } catch {
    return undefined;
  }
}

/**
 * Runs `call` through the tool's cache when it declares one (else just runs it): a live answer in the store is
 * returned as `cached` without running the tool; otherwise this caller claims the entry, runs the call and keeps
 * its answer for the ttl. A store that fails is no reason to fail the read: the call then runs uncached.
 */
export async function cachedRead(
  tool: Tool,
  validated: unknown,
  settings: { store: IdempotencyStore | undefined; owner: string; skip: boolean },
  call: () => Promise<ToolActivityResult>,
): Promise<ToolActivityResult> {
  const entry = tool.contract.catalogEntry;
  const { store } = settings;
  const cacheKey = entry.cache && !settings.skip && store ? cacheKeyOf(tool, validated) : undefined;
  if (!entry.cache || !store || !cacheKey) return await call();
  const leaseMs = entry.timeoutMs;
  const deadline = Date.now() + leaseMs;
  for (;;) {
    const found = await store
      .begin(cacheKey.key, cacheKey.digest, { owner: settings.owner, leaseMs })
      .catch(() => undefined);
    if (!found || found.state === 'failed' || found.state === 'conflict') return await call();
    if (found.state === 'completed') return { output: found.result, attempt: 1, cached: true };
    if (found.state === 'started' || found.state === 'outcome_unknown') {
      return await answerAndKeep(store, cacheKey.key, found.token, entry.cache.ttlMs, call);
    }
    // Another run is asking the same read right now: its answer is worth a short wait, up to one attempt.
    if (Date.now() >= deadline) return await call();
    await delay(Math.min(IN_FLIGHT_POLL_MS, Math.max(1, found.retryAfterMs)));
  }
}

async function answerAndKeep(
  store: IdempotencyStore,
  key: string,
  token: string,
  ttlMs: number,
  call: () => Promise<ToolActivityResult>,
): Promise<ToolActivityResult> {
  let result: ToolActivityResult;
  try {
    result = await call();
  } catch (error) {
    await store.release(key, token).catch(() => false);
    throw error;
  }
  if (isStoredOutputReference(result.output)) await store.release(key, token).catch(() => false);
  else await store.complete(key, token, result.output, { retentionMs: ttlMs }).catch(() => undefined);
  return result;
}
