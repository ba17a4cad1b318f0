/**
 * The slot of a tool call under its tool's limits (`concurrency`, `rateLimit`) and breaker, across every worker that
 * shares the tool limit store: wait for it (visibly, in the heartbeat details), hold it while the tool runs (its
 * lease renewed), free it with the call's outcome (which the breaker counts).
 *
 * The wait never eats into the tool's attempt timeout: an attempt waits only within the part of its
 * start-to-close timeout that exceeds the tool's own timeout (the workflow adds `slotWaitMs` for tools with
 * limits), and past it defers: it fails with a retry delay and leaves the count of attempts that ran the tool
 * unchanged, so the next attempt waits on with a fresh clock (its place in line kept).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { EventEmitter } from 'node:events';
import type { ApplicationFailure } from '@temporalio/common';
import { classify } from '../failures/classify';
import { TOOL_ERROR_CODES, toolFailure } from '../contract/activity-protocol';
import { TOOL_LIMIT_DEFAULTS, type ToolLimitSettings, type ToolWaiting } from '../contract/tool-limits';
import type { CallOutcome, SlotRefused, ToolLimitStore } from '../stores/limits/tool-limit-store';
import type { CallHeartbeat } from './call-heartbeat';
import type { Tool } from '../tools/define-tool';
import { limitKeyOf } from '../tools/tool-limits';
import type { EngineMetrics } from '../telemetry/engine-metrics';

/** What {@link acquireSlot} needs of the worker. */
export interface SlotDeps {
  store: ToolLimitStore;
  /** Lease of a held slot (default {@link TOOL_LIMIT_DEFAULTS.slotLeaseMs}). */
  leaseMs: number;
  metrics: EngineMetrics;
  log: { warn(message: string, meta?: Record<string, unknown>): void };
}

/** One call's request: which tool and key, who asks, and how long this attempt may wait. */
export interface SlotCall {
  tool: string;
  limits: ToolLimitSettings;
  /** The call's limit key, when the tool declares one. */
  key: string | undefined;
  /** The call (its idempotency key): its place in line over its attempts. */
  callId: string;
  /** This attempt: the slot's holder. */
  holder: string;
  /** Milliseconds this attempt may wait before it defers. */
  waitBudgetMs: number;
  heartbeat: CallHeartbeat;
  /** Attempts that ran the tool before this one (a deferring attempt leaves this count). */
  executionsBefore: number;
  attempt: number;
  cancellation: AbortSignal;
}

/** A slot held by a call: free it once with how the call ended. */
export interface HeldSlot {
  release(outcome: CallOutcome): Promise<void>;
}

/** Slots freed in this process, by scope: a waiting call of the same worker asks again at once. */
const freed = new EventEmitter().setMaxListeners(0);

/** The scope the limits count a call in: the tool, or the tool and the call's key. */
export function limitScope(tool: string, key: string | undefined): string {
  return key === undefined ? tool : `${tool}#${key}`;
}

/**
 * Waits for the call's slot and returns it held. Throws the deferral (a retryable failure that does not count as
 * an execution) when the attempt's wait budget runs out, and the cancellation when the call is cancelled.
 */
export async function acquireSlot(call: SlotCall, deps: SlotDeps): Promise<HeldSlot> {
  const scope = limitScope(call.tool, call.key);
  const started = Date.now();
  let waitedFor: SlotRefused['reason'] | undefined;
  for (;;) {
    const decision = await deps.store.acquire({
      scope,
      holder: call.holder,
      waiter: call.callId,
      ...(call.limits.concurrency !== undefined ? { concurrency: call.limits.concurrency } : {}),
      ...(call.limits.rate ? { rate: call.limits.rate } : {}),
      breaker: call.limits.breaker,
      leaseMs: deps.leaseMs,
      waiterStaleMs: TOOL_LIMIT_DEFAULTS.waiterStaleMs,
    });
    if (decision.granted) {
      if (waitedFor) deps.metrics.slotWait.record(Date.now() - started, { tool: call.tool, reason: waitedFor });
      call.heartbeat.setWaiting(undefined);
      return holdSlot(scope, call, deps);
    }
    waitedFor ??= decision.reason;
    call.heartbeat.setWaiting(waitingOf(call, decision, started));
    call.heartbeat.beat();
    const pause = Math.min(decision.retryInMs, 1_000) * (0.8 + Math.random() * 0.4);
    if (Date.now() + pause - started > call.waitBudgetMs) throw deferral(call, decision, started);
    await nextAsk(scope, pause, call.cancellation).catch(async (error: unknown) => {
      await deps.store.leave(scope, call.callId).catch(() => {});
      throw error;
    });
  }
}

/** Sleeps until the pause is over, a slot of the scope is freed in this process, or the call is cancelled. */
async function nextAsk(scope: string, pauseMs: number, cancellation: AbortSignal): Promise<void> {
  const wake = new AbortController();
  const onFreed = () => wake.abort();
  freed.once(scope, onFreed);
  try {
    await sleep(pauseMs, undefined, { signal: AbortSignal.any([wake.signal, cancellation]) }).catch(() => {});
    if (cancellation.aborted) throw cancellation.reason;
  } finally {
    freed.off(scope, onFreed);
  }
}

function holdSlot(scope: string, call: SlotCall, deps: SlotDeps): HeldSlot {
  const renewal = setInterval(() => {
    deps.store.renew(scope, call.holder, deps.leaseMs).then(
      (held) => {
        if (!held) deps.log.warn(`The slot of "${call.tool}" was lost (its lease ran out); the call goes on.`);
      },
      () => {},
    );
  }, deps.leaseMs / 3);
  renewal.unref();
  let released = false;
  return {
    async release(outcome) {
      if (released) return;
      released = true;
      clearInterval(renewal);
      const opened = await deps.store.release(scope, call.holder, outcome, call.limits.breaker).catch(() => false);
      if (opened) deps.metrics.breakerOpens.add(1, { tool: call.tool });
      freed.emit(scope);
    },
  };
}

/** How a call's error counts for the breaker: overloaded (429, 503, unreachable) or anything else. */
export function outcomeOfError(error: unknown): CallOutcome {
  const classification = classify(error);
  if (classification.kind === 'rate-limited' || classification.code === TOOL_ERROR_CODES.RATE_LIMITED) {
    return {
      kind: 'overloaded',
      ...(classification.retryAfterMs !== undefined ? { retryAfterMs: classification.retryAfterMs } : {}),
      reason:
        classification.retryAfterMs !== undefined
          ? `rate limited, Retry-After ${Math.round(classification.retryAfterMs / 100) / 10} s`
          : 'rate limited',
    };
  }
  if (classification.code === TOOL_ERROR_CODES.UNAVAILABLE) return { kind: 'overloaded', reason: 'unavailable' };
  return { kind: 'other' };
}

function waitingOf(call: SlotCall, decision: SlotRefused, started: number): ToolWaiting {
  return {
    reason: decision.reason,
    since: new Date(started).toISOString(),
    ...(call.key !== undefined ? { key: call.key } : {}),
    ahead: decision.ahead,
    ...(decision.openUntil !== undefined ? { until: new Date(decision.openUntil).toISOString() } : {}),
    message: waitingMessage(call, decision),
  };
}

function waitingMessage(call: SlotCall, decision: SlotRefused): string {
  const of = `${call.tool}${call.key !== undefined ? ` (key ${call.key})` : ''}`;
  const line = decision.ahead > 0 ? `, ${decision.ahead} ahead` : '';
  switch (decision.reason) {
    case 'paused':
      return `paused: ${of} asked to wait (${decision.breakerReason ?? 'breaker open'}) until ${new Date(decision.openUntil ?? 0).toISOString()}`;
    case 'probing':
      return `waiting: one call probes ${of} after a pause${line}`;
    case 'rate':
      return `waiting for the rate limit of ${of} (${call.limits.rate?.limit} per ${call.limits.rate?.periodMs === 1_000 ? 'second' : 'minute'})${line}`;
    case 'concurrency':
      return `waiting for a slot of ${of} (${decision.running} of ${call.limits.concurrency} running)${line}`;
    default:
      return `waiting in line for ${of}${line}`;
  }
}

/**
 * The failure of an attempt that waited its whole budget: retryable after the store's estimate, and the count of
 * executions left as it was (the tool did not run), so it never uses up the tool's `maximumAttempts`.
 */
function deferral(call: SlotCall, decision: SlotRefused, started: number): ApplicationFailure {
  call.heartbeat.defer(call.executionsBefore);
  const waitedS = Math.round((Date.now() - started) / 100) / 10;
  return toolFailure(
    {
      status: 'error',
      code: TOOL_ERROR_CODES.RATE_LIMITED,
      message: `The call waited ${waitedS} s for a slot of "${call.tool}" (${waitingMessage(call, decision)}) and waits on.`,
      hint: 'The tool is at its limit; the engine runs the call when a slot is free. Do not repeat it yourself.',
      retryable: true,
      attempts: call.attempt,
    },
    { mayHaveHadEffect: false },
    Math.max(10, decision.reason === 'paused' ? decision.retryInMs : Math.min(decision.retryInMs, 1_000)),
  );
}

/** The call's limit key (the tool's key function over the validated arguments); a throwing key fails the call. */
export function limitKeyOfCall(tool: Tool, args: unknown, attempt: number): string | undefined {
  const spec = tool.contract.spec;
  const key = (spec.concurrency?.key ?? spec.rateLimit?.key) as ((args: unknown) => string) | undefined;
  try {
    return limitKeyOf(key, args);
  } catch (error) {
    throw toolFailure(
      {
        status: 'error',
        code: TOOL_ERROR_CODES.INTERNAL,
        message: `The limit key of "${tool.contract.name}" could not be computed: ${error instanceof Error ? error.message : String(error)}`,
        hint: 'This is a fault of the tool, not of your call; try another way.',
        retryable: false,
        attempts: attempt,
      },
      { mayHaveHadEffect: false },
    );
  }
}

/** The tool with its execution freeing the slot as soon as the downstream answered, with how it answered. */
export function releasingSlot(tool: Tool, slot: HeldSlot): Tool {
  return {
    contract: tool.contract,
    hooks: tool.hooks,
    execute: async (args, ctx) => {
      let output: unknown;
      try {
        output = await tool.execute(args, ctx);
      } catch (error) {
        await slot.release(outcomeOfError(error));
        throw error;
      }
      await slot.release({ kind: 'ok' });
      return output;
    },
  };
}
