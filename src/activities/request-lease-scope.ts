import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The lease check of one running tool attempt, as the request hooks see it: `check()` returns when the
 * attempt may still send and throws the attempt's `LeaseLostError` when it may not. Synchronous, no I/O.
 */
export interface RequestLeaseCheck {
  check(): void;
}

/**
 * One store per process, kept on Node's own `AsyncLocalStorage` class: the request hooks are
 * process-wide, so whichever copy of this package installed them (another version, another vm realm
 * such as a Jest test file) must see the attempts of every other copy.
 */
const SCOPE = Symbol.for('durable-tools.requestLeaseScope');
const registry = AsyncLocalStorage as unknown as { [SCOPE]?: AsyncLocalStorage<RequestLeaseCheck> };
const running = (registry[SCOPE] ??= new AsyncLocalStorage<RequestLeaseCheck>());

/**
 * Runs `fn` with `check` as the lease check of every HTTP request made from its async context: the
 * timers, promises and callbacks it starts inherit it. An inner call replaces it for its own context.
 */
export function runInRequestLeaseScope<T>(check: RequestLeaseCheck, fn: () => T): T {
  return running.run(check, fn);
}

/**
 * Called by the request hooks just before a request leaves the process: throws the running attempt's
 * `LeaseLostError` once its lease is gone; does nothing outside a tool attempt.
 */
export function assertRequestLease(): void {
  running.getStore()?.check();
}
