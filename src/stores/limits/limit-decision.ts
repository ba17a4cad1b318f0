/**
 * The pure rules every tool limit store applies inside its transaction: whether a request gets a slot, and what a
 * call's outcome does to its scope's breaker.
 */
import { TOOL_LIMIT_DEFAULTS, type ToolWaitReason } from '../../contract/tool-limits';
import type { BreakerState, CallOutcome, SlotDecision, SlotRequest } from './tool-limit-store';

/** What a store reads of one scope, inside the transaction, for one request. */
export interface ScopeSnapshot {
  now: number;
  /** Slots held (lease not expired), other than the requester's. */
  running: number;
  /** Calls that still count against the rate (`rateCountsUntil` after now). */
  startsInWindow: number;
  /** When the first of them stops counting (undefined while they all run). */
  oldestStart: number | undefined;
  /** Fresh waiters ahead of the requester. */
  ahead: number;
  breaker: BreakerState | undefined;
}

/** Shortest and longest pause between two asks of a waiting call. */
const POLL = { minMs: 10, maxMs: 1_000, concurrencyMs: 40 } as const;

/** Whether the request gets a slot now, and if not, why and when to ask again. */
export function decideSlot(request: SlotRequest, snap: ScopeSnapshot): SlotDecision {
  const { now, ahead, running } = snap;
  const breaker = request.breaker ? snap.breaker : undefined;
  let probe = false;
  if (breaker && breaker.openUntil > 0) {
    if (now < breaker.openUntil) {
      return refused('paused', breaker.openUntil - now, snap, { openUntil: breaker.openUntil, breaker });
    }
    const probing =
      breaker.probeHolder !== null && breaker.probeExpires > now && breaker.probeHolder !== request.holder;
    if (probing || ahead > 0) return refused('probing', 100, snap, { breaker });
    probe = true;
  }
  const concurrencyFree = request.concurrency === undefined ? Infinity : request.concurrency - running;
  const rateFree = request.rate === undefined ? Infinity : request.rate.limit - snap.startsInWindow;
  const free = probe ? Math.min(1, concurrencyFree, rateFree) : Math.min(concurrencyFree, rateFree);
  if (ahead < free) return { granted: true, probe };
  if (rateFree <= ahead && request.rate) {
    const { limit, periodMs } = request.rate;
    // The first place frees when its call stops counting; later ones follow about one per period/limit each.
    const oldestFrees = (snap.oldestStart ?? now + periodMs) - now;
    const turn = Math.max(0, ahead - Math.max(0, rateFree)) * (periodMs / limit);
    // A running call's place frees a period after it ends, which no one knows yet: the first in line ask often.
    return refused('rate', Math.min(oldestFrees + turn, headOfLine(ahead)), snap, {});
  }
  if (concurrencyFree <= ahead) return refused('concurrency', headOfLine(ahead), snap, {});
  return refused('queued', POLL.concurrencyMs, snap, {});
}

/** How soon a call `ahead` places back in line asks again: the first ones every ~50 ms, the last ones every second. */
function headOfLine(ahead: number): number {
  return POLL.concurrencyMs + 25 * ahead;
}

function refused(
  reason: ToolWaitReason,
  retryInMs: number,
  snap: ScopeSnapshot,
  extra: { openUntil?: number; breaker?: BreakerState },
): SlotDecision {
  return {
    granted: false,
    reason,
    retryInMs: Math.round(
      reason === 'paused' ? Math.max(0, retryInMs) : Math.min(POLL.maxMs, Math.max(POLL.minMs, retryInMs)),
    ),
    ahead: snap.ahead,
    running: snap.running,
    ...(extra.openUntil !== undefined ? { openUntil: extra.openUntil } : {}),
    ...(extra.breaker?.reason ? { breakerReason: extra.breaker.reason } : {}),
  };
}

/** A closed breaker of a scope. */
export function closedBreaker(scope: string): BreakerState {
  return { scope, openUntil: 0, failures: 0, opens: 0, probeHolder: null, probeExpires: 0, reason: '' };
}

/**
 * The breaker after a call that held a slot ended: `ok` closes a half-open breaker (its probe answered) and resets
 * the failure count; `overloaded` with a Retry-After pauses until then, without one counts towards
 * {@link TOOL_LIMIT_DEFAULTS.breakerFailureThreshold} (a failed probe reopens at once, for twice as long); `other`
 * frees the probe for the next call.
 */
export function breakerAfter(current: BreakerState, holder: string, outcome: CallOutcome, now: number): BreakerState {
  const wasProbe = current.probeHolder === holder;
  const b = { ...current, ...(wasProbe ? { probeHolder: null, probeExpires: 0 } : {}) };
  if (outcome.kind === 'ok') {
    if (b.openUntil > 0 && (wasProbe || now >= b.openUntil)) return closedBreaker(b.scope);
    return { ...b, failures: 0 };
  }
  if (outcome.kind === 'other') return b;
  const failures = b.failures + 1;
  if (outcome.retryAfterMs !== undefined) {
    const pause = Math.min(outcome.retryAfterMs, TOOL_LIMIT_DEFAULTS.breakerMaxRetryAfterMs);
    return {
      ...b,
      failures,
      opens: b.opens + 1,
      openUntil: Math.max(b.openUntil, now + pause),
      reason: outcome.reason,
    };
  }
  const open = wasProbe || (failures >= TOOL_LIMIT_DEFAULTS.breakerFailureThreshold && b.openUntil <= now);
  if (!open) return { ...b, failures };
  const pause = Math.min(TOOL_LIMIT_DEFAULTS.breakerBaseOpenMs * 2 ** b.opens, TOOL_LIMIT_DEFAULTS.breakerMaxOpenMs);
  const reason = wasProbe
    ? `the probe failed too (${outcome.reason})`
    : `${failures} overload failures in a row (${outcome.reason})`;
  return { ...b, failures, opens: b.opens + 1, openUntil: Math.max(b.openUntil, now + pause), reason };
}
