/**
 * The per-tool limits a tool may declare (`defineTool({ concurrency, rateLimit, breaker })`), checked at
 * definition, and the key of one call's limits. The catalog carries the numbers; the key functions stay here.
 */
import { createHash } from 'node:crypto';
import type { Duration } from '@temporalio/common';
import { TOOL_LIMIT_DEFAULTS, type ToolLimitSettings } from '../contract/tool-limits';
import { ToolDefinitionError } from '../contract/tool-definition-error';
import { durationMs } from './tool-declaration-checks';

/** The key of a limit: a function of the validated arguments, e.g. `({ accountId }) => accountId`. */
export type ToolLimitKey<A> = (args: A) => string;

/** `concurrency`: at most `max` calls of the tool (per key) run at once across every worker. */
export interface ToolConcurrencyOptions<A = never> {
  /** Calls running at once, a positive integer. */
  max: number;
  /** Per what the limit counts (default: the whole tool). */
  key?: ToolLimitKey<A>;
}

/** `rateLimit`: at most `perSecond` (or `perMinute`) calls of the tool (per key) start in any such window. */
export interface ToolRateLimitOptions<A = never> {
  perSecond?: number;
  perMinute?: number;
  /** Per what the limit counts (default: the whole tool). With `concurrency` too, both must use the same key. */
  key?: ToolLimitKey<A>;
}

/**
 * `breaker`: the shared backoff. `true` (the default when the tool declares `concurrency` or `rateLimit`): a 429
 * with Retry-After, or {@link TOOL_LIMIT_DEFAULTS.breakerFailureThreshold} overload failures in a row, pauses every
 * pending call of the tool (and key) on every worker; then one call probes, and the rest follow when it succeeds.
 */
export type ToolBreakerOption = boolean;

/** The limit options of a tool declaration. */
export interface ToolLimitOptions<A = never> {
  concurrency?: ToolConcurrencyOptions<A>;
  rateLimit?: ToolRateLimitOptions<A>;
  breaker?: ToolBreakerOption;
  /** How long one attempt may wait for its slot before it defers (default 60 s); see docs/limits.md. */
  slotWait?: Duration;
}

/** The checked limits of a declaration and its key function; undefined when it declares none. */
export interface ResolvedToolLimits {
  settings: ToolLimitSettings;
  key: ((args: unknown) => string) | undefined;
}

/** Checks the limit options of a tool; throws {@link ToolDefinitionError} `INVALID_LIMITS` on a malformed one. */
export function resolveToolLimits(
  name: string,
  options: ToolLimitOptions<unknown>,
  local: boolean,
): ResolvedToolLimits | undefined {
  const { concurrency, rateLimit, breaker, slotWait } = options;
  const fail = (message: string): never => {
    throw new ToolDefinitionError(`Tool "${name}": ${message}`, 'INVALID_LIMITS');
  };
  if (breaker !== undefined && typeof breaker !== 'boolean') fail('breaker must be true or false.');
  const declared = concurrency !== undefined || rateLimit !== undefined || breaker === true;
  if (!declared) {
    if (slotWait !== undefined) fail('slotWait needs concurrency, rateLimit or breaker.');
    return undefined;
  }
  if (local) fail('a tool with execution "local" cannot wait for a slot; drop the limits or run it as an activity.');
  const max = concurrency === undefined ? undefined : positiveInteger(concurrency.max, 'concurrency.max', fail);
  const rate = rateLimit === undefined ? undefined : rateOf(rateLimit, fail);
  const keys = [concurrency?.key, rateLimit?.key].filter((key) => key !== undefined);
  for (const key of keys) if (typeof key !== 'function') fail('a limit key must be a function of the arguments.');
  if (keys.length === 2 && keys[0] !== keys[1]) {
    fail('concurrency.key and rateLimit.key must be the same function (one key per call).');
  }
  const slotWaitMs =
    slotWait === undefined ? TOOL_LIMIT_DEFAULTS.slotWaitMs : durationMs(name, 'slotWait', slotWait, 0);
  const settings: ToolLimitSettings = {
    ...(max !== undefined ? { concurrency: max } : {}),
    ...(rate ? { rate } : {}),
    keyed: keys.length > 0,
    breaker: breaker ?? true,
    slotWaitMs,
  };
  return { settings, key: keys[0] as ((args: unknown) => string) | undefined };
}

function rateOf(options: ToolRateLimitOptions<unknown>, fail: (message: string) => never): ToolLimitSettings['rate'] {
  if (options === null || typeof options !== 'object') return fail('rateLimit must be an object.');
  const { perSecond, perMinute } = options;
  if ((perSecond === undefined) === (perMinute === undefined)) {
    return fail('rateLimit needs exactly one of perSecond and perMinute.');
  }
  return perSecond !== undefined
    ? { limit: positiveInteger(perSecond, 'rateLimit.perSecond', fail), periodMs: 1_000 }
    : { limit: positiveInteger(perMinute, 'rateLimit.perMinute', fail), periodMs: 60_000 };
}

function positiveInteger(value: unknown, what: string, fail: (message: string) => never): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    return fail(`${what} must be a positive integer (got ${JSON.stringify(value) ?? String(value)}).`);
  }
  return value;
}

/**
 * The limit key of one call: the tool's key function over the validated arguments, as text of at most
 * {@link TOOL_LIMIT_DEFAULTS.maxKeyChars} characters (longer keys are hashed). Undefined for an unkeyed tool.
 */
export function limitKeyOf(key: ((args: unknown) => string) | undefined, args: unknown): string | undefined {
  if (!key) return undefined;
  const raw = key(args);
  const text = typeof raw === 'string' ? raw : (JSON.stringify(raw) ?? String(raw));
  if (text.length <= TOOL_LIMIT_DEFAULTS.maxKeyChars) return text;
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}
