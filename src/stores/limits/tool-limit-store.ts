import type { ToolWaitReason } from '../../contract/tool-limits';

/** One attempt's request for a slot of a tool (and key): the limits it must respect. */
export interface SlotRequest {
  /** What the limits count: the tool's name, or `name#key` for a keyed tool. */
  scope: string;
  /** This attempt (unique): the holder of the slot it gets. */
  holder: string;
  /** The call (the same over its attempts): its place in line. */
  waiter: string;
  /** At most this many slots held at once. */
  concurrency?: number;
  /** At most `limit` starts in any window of `periodMs`. */
  rate?: { limit: number; periodMs: number };
  /** Whether the scope's breaker applies. */
  breaker: boolean;
  /** Lease of the slot: free again unless renewed within this. */
  leaseMs: number;
  /** A waiter not seen for this long loses its place. */
  waiterStaleMs: number;
}

/** A slot was granted: `probe` when the call is the half-open breaker's one probe. */
export interface SlotGranted {
  granted: true;
  probe: boolean;
}

/** No slot yet: why, when to ask again, and the call's place in line. */
export interface SlotRefused {
  granted: false;
  reason: ToolWaitReason;
  /** When to ask again, in ms from now (an estimate, except for a paused breaker and a spent rate). */
  retryInMs: number;
  /** Calls ahead of this one in line. */
  ahead: number;
  /** Slots held now. */
  running: number;
  /** Until when the breaker pauses calls (epoch ms), when paused. */
  openUntil?: number;
  /** Why the breaker opened, when it did. */
  breakerReason?: string;
}

/** The answer of {@link ToolLimitStore.acquire}. */
export type SlotDecision = SlotGranted | SlotRefused;

/**
 * How a call that held a slot ended, as the breaker counts it: `ok` (the downstream answered), `overloaded` (429,
 * 503, unreachable; with the Retry-After it asked for) or `other` (any other failure).
 */
export type CallOutcome =
  { kind: 'ok' } | { kind: 'overloaded'; retryAfterMs?: number; reason: string } | { kind: 'other' };

/** The breaker of one scope, as the store keeps it. */
export interface BreakerState {
  scope: string;
  /** 0 when closed; open until this (epoch ms), half-open after it until a probe succeeds. */
  openUntil: number;
  /** Overload failures in a row. */
  failures: number;
  /** Times the breaker opened since it was last closed (the pause doubles with each). */
  opens: number;
  /** The attempt probing a half-open breaker, and until when its probe is held. */
  probeHolder: string | null;
  probeExpires: number;
  /** Why it opened (`429 Retry-After 2 s`, `5 overload failures in a row`). */
  reason: string;
}

/**
 * Slots, rate windows and breakers of tools, shared by every worker that uses the same store: SQLite for the
 * workers of one machine, memory for one process (tests). Every decision is one transaction, so two workers never
 * both take the last slot.
 */
export interface ToolLimitStore {
  /** Takes a slot when the limits, the line and the breaker allow it; else says why not and when to ask again. */
  acquire(request: SlotRequest): Promise<SlotDecision>;
  /** Extends a held slot's lease; false when it was lost (expired and reclaimed). */
  renew(scope: string, holder: string, leaseMs: number): Promise<boolean>;
  /** Frees a slot and tells the scope's breaker how the call ended (when `breaker`); true when that opened it. */
  release(scope: string, holder: string, outcome: CallOutcome, breaker: boolean): Promise<boolean>;
  /** Removes a waiting call from the line (it was cancelled or ended). */
  leave(scope: string, waiter: string): Promise<void>;
  /** The breakers that are open or half-open now. */
  openBreakers(): Promise<BreakerState[]>;
  close(): Promise<void>;
}
