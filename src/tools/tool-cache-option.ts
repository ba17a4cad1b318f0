import type { Duration } from '@temporalio/common';
import type { ToolCacheSettings, ToolEffect } from '../contract/tool-catalog-entry';
import { ToolDefinitionError } from '../contract/tool-definition-error';
import { durationMs } from './tool-declaration-checks';

/**
 * `defineTool({ cache })` of a read-only tool (docs/tools.md, "Cached reads"): its answers are kept in the worker's
 * idempotency store for `ttl` and shared by every run and worker that uses the store, so the same read asked again
 * within `ttl` does not reach the downstream.
 */
export interface ToolCacheOptions<A = unknown> {
  /** How long an answer is reused (`'5m'`, `60_000`). */
  ttl: Duration;
  /**
   * What makes two calls the same read, from the validated arguments (default: all the arguments). Return a
   * JSON value, e.g. `({ city }) => city.toLowerCase()`.
   */
  key?: (args: A) => unknown;
}

const OPTIONS = new Set(['ttl', 'key']);

/**
 * The catalog's cache settings of a tool, or undefined when it declares none. Refuses a cache on a tool with
 * effects (an answer reused would hide an effect the call was meant to have), a ttl that is not a positive
 * duration, a key that is not a function and unknown options: {@link ToolDefinitionError} `INVALID_CACHE`.
 */
export function resolveToolCache(name: string, cache: unknown, effect: ToolEffect): ToolCacheSettings | undefined {
  if (cache === undefined) return undefined;
  const fail = (problem: string) => new ToolDefinitionError(`Tool "${name}": ${problem}`, 'INVALID_CACHE');
  if (effect !== 'read-only') {
    throw fail(
      `declares cache but its effect is "${effect}": only read-only tools may be cached (a cached answer would skip the call's effect).`,
    );
  }
  if (typeof cache !== 'object' || cache === null) throw fail('cache must be an object { ttl, key? }.');
  const unknown = Object.keys(cache).filter((option) => !OPTIONS.has(option));
  if (unknown.length > 0) throw fail(`cache has unknown option(s) ${unknown.join(', ')} (known: ttl, key).`);
  const { ttl, key } = cache as { ttl?: unknown; key?: unknown };
  if (key !== undefined && typeof key !== 'function') throw fail('cache.key must be a function of the arguments.');
  let ttlMs: number;
  try {
    ttlMs = durationMs(name, 'cache.ttl', ttl ?? null, 1);
  } catch {
    throw fail(`cache.ttl must be a finite, positive duration such as "5m" or 60000 (got ${JSON.stringify(ttl)}).`);
  }
  return { ttlMs };
}
