/**
 * A long call's declared `resultRetention`, applied where the call leaves data behind: its idempotency record
 * (the stored result or failure), its claim-check outputs and its checkpoint. Without a declaration every store
 * keeps its own retention.
 */
import type { IdempotencyStore } from '../stores/idempotency/idempotency-store';
import type { ToolLongCallSettings } from '../contract/tool-catalog-entry';

/**
 * The key store a call records its outcome in: for a long call declaring `resultRetention`, a view of `store`
 * whose `complete` and `fail` keep the record that long (every other method passes through); else `store`.
 */
export function storeKeepingResults(
  store: IdempotencyStore | undefined,
  longCall: ToolLongCallSettings | undefined,
): IdempotencyStore | undefined {
  const retentionMs = longCall?.resultRetentionMs;
  if (store === undefined || retentionMs === undefined) return store;
  const { takeOverDeadHolder } = store;
  return {
    begin: (key, fingerprint, options) => store.begin(key, fingerprint, options),
    ...(takeOverDeadHolder
      ? { takeOverDeadHolder: (key, fingerprint, options) => takeOverDeadHolder.call(store, key, fingerprint, options) }
      : {}),
    heartbeat: (key, token, leaseMs) => store.heartbeat(key, token, leaseMs),
    complete: (key, token, result, options) => store.complete(key, token, result, { retentionMs, ...options }),
    fail: (key, token, error, options) => store.fail(key, token, error, { retentionMs, ...options }),
    release: (key, token) => store.release(key, token),
    reap: (now) => store.reap(now),
    close: () => store.close(),
  };
}

/** The expiry of a long call's claim-check outputs, stored now: now plus its `resultRetention`; none by default. */
export function outputRetention(
  longCall: ToolLongCallSettings | undefined,
  now: number = Date.now(),
): { expiresAt?: number } {
  const retentionMs = longCall?.resultRetentionMs;
  return retentionMs === undefined ? {} : { expiresAt: now + retentionMs };
}

/**
 * How long a long call's checkpoint is kept after each save: its deadline plus its `resultRetention`, so a
 * checkpoint outlives every attempt of the call and stays the declared time after the call ended (at most a
 * deadline longer). None by default (the payload store's retention).
 */
export function checkpointRetention(longCall: ToolLongCallSettings | undefined): { keepForMs?: number } {
  if (longCall?.resultRetentionMs === undefined) return {};
  return { keepForMs: longCall.deadlineMs + longCall.resultRetentionMs };
}
