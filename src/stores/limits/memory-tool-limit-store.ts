import { breakerAfter, closedBreaker, decideSlot } from './limit-decision';
import type { BreakerState, CallOutcome, SlotDecision, SlotRequest, ToolLimitStore } from './tool-limit-store';

interface ScopeState {
  /** holder -> lease expiry */
  slots: Map<string, number>;
  /** Calls counting against the rate: holder, until when (a period after it ends), its period. */
  starts: Array<{ holder: string; until: number; periodMs: number }>;
  /** waiter -> [since, seen] */
  waiters: Map<string, [number, number]>;
  breaker: BreakerState;
}

/**
 * A {@link ToolLimitStore} in this process's memory: the limits hold across the runs of one worker only (tests,
 * `stores: 'memory'`). Workers on one machine share the SQLite store, on several the Postgres one.
 */
export class MemoryToolLimitStore implements ToolLimitStore {
  private readonly scopes = new Map<string, ScopeState>();

  constructor(private readonly clock: () => number = Date.now) {}

  acquire(request: SlotRequest): Promise<SlotDecision> {
    const now = this.clock();
    const state = this.scope(request.scope);
    prune(state, now, request);
    const mine = state.waiters.get(request.waiter);
    const since = mine?.[0] ?? now;
    let ahead = 0;
    for (const [waiter, [s]] of state.waiters) {
      if (waiter !== request.waiter && (s < since || (s === since && waiter < request.waiter))) ahead += 1;
    }
    const window = request.rate ? state.starts : [];
    const oldest = window.length > 0 ? Math.min(...window.map((start) => start.until)) : undefined;
    const decision = decideSlot(request, {
      now,
      running: [...state.slots.keys()].filter((holder) => holder !== request.holder).length,
      startsInWindow: window.length,
      oldestStart: oldest,
      ahead,
      breaker: state.breaker,
    });
    if (decision.granted) {
      state.waiters.delete(request.waiter);
      state.slots.set(request.holder, now + request.leaseMs);
      if (request.rate) {
        const { periodMs } = request.rate;
        state.starts.push({ holder: request.holder, until: now + 2 * periodMs, periodMs });
      }
      if (decision.probe)
        state.breaker = { ...state.breaker, probeHolder: request.holder, probeExpires: now + request.leaseMs };
    } else {
      state.waiters.set(request.waiter, [since, now]);
    }
    return Promise.resolve(decision);
  }

  renew(scope: string, holder: string, leaseMs: number): Promise<boolean> {
    const state = this.scopes.get(scope);
    const now = this.clock();
    const expiry = state?.slots.get(holder);
    if (!state || expiry === undefined || expiry <= now) return Promise.resolve(false);
    state.slots.set(holder, now + leaseMs);
    if (state.breaker.probeHolder === holder) state.breaker = { ...state.breaker, probeExpires: now + leaseMs };
    return Promise.resolve(true);
  }

  release(scope: string, holder: string, outcome: CallOutcome, breaker: boolean): Promise<boolean> {
    const state = this.scope(scope);
    state.slots.delete(holder);
    const now = this.clock();
    for (const start of state.starts) {
      if (start.holder === holder) start.until = Math.min(start.until, now + start.periodMs);
    }
    if (!breaker) return Promise.resolve(false);
    const before = state.breaker.opens;
    state.breaker = breakerAfter(state.breaker, holder, outcome, this.clock());
    return Promise.resolve(state.breaker.opens > before);
  }

  leave(scope: string, waiter: string): Promise<void> {
    this.scopes.get(scope)?.waiters.delete(waiter);
    return Promise.resolve();
  }

  openBreakers(): Promise<BreakerState[]> {
    return Promise.resolve([...this.scopes.values()].map((s) => s.breaker).filter((b) => b.openUntil > 0));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private scope(scope: string): ScopeState {
    let state = this.scopes.get(scope);
    if (!state) {
      state = { slots: new Map(), starts: [], waiters: new Map(), breaker: closedBreaker(scope) };
      this.scopes.set(scope, state);
    }
    return state;
  }
}

function prune(state: ScopeState, now: number, request: SlotRequest): void {
  for (const [holder, expiry] of state.slots) if (expiry <= now) state.slots.delete(holder);
  state.starts = state.starts.filter((start) => start.until > now);
  for (const [waiter, [, seen]] of state.waiters) {
    if (seen < now - request.waiterStaleMs) state.waiters.delete(waiter);
  }
  if (state.breaker.probeHolder !== null && state.breaker.probeExpires <= now) {
    state.breaker = { ...state.breaker, probeHolder: null, probeExpires: 0 };
  }
}
