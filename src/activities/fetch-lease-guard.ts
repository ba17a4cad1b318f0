import { runInThisContext } from 'node:vm';
import { assertRequestLease } from './request-lease-scope';

/**
 * Where undici keeps the process's global dispatcher: Node's bundled undici (global `fetch`) and every
 * copy of the `undici` package read the dispatcher of their requests from this symbol.
 */
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');
/** Reading this from a guarded dispatcher gives the dispatcher it wraps. */
const WRAPPED = Symbol.for('durable-tools.leaseGuard.wrapped');

interface Dispatcher {
  dispatch(options: unknown, handler: unknown): boolean;
}

type GlobalWithDispatcher = typeof globalThis & { [GLOBAL_DISPATCHER]?: Dispatcher };

/**
 * Wraps the global undici dispatcher so that each request's `dispatch` — the moment undici hands it to
 * a connection, after everything `fetch` does before — first runs the running attempt's lease check.
 * A refusal throws from `dispatch`: `fetch` rejects with `TypeError: fetch failed` whose `cause` is the
 * `LeaseLostError`, and nothing is sent. Idempotent; wraps again a dispatcher set since (`setGlobalDispatcher`).
 */
export function installFetchLeaseGuard(): void {
  for (const global of dispatcherRealms()) {
    const current = global[GLOBAL_DISPATCHER];
    if (current !== undefined && !isGuarded(current)) global[GLOBAL_DISPATCHER] = guardedDispatcher(current);
  }
}

/** Puts the wrapped dispatchers back. */
export function uninstallFetchLeaseGuard(): void {
  for (const global of dispatcherRealms()) {
    const current = global[GLOBAL_DISPATCHER];
    if (current !== undefined && isGuarded(current)) {
      global[GLOBAL_DISPATCHER] = (current as unknown as Record<symbol, Dispatcher>)[WRAPPED];
    }
  }
}

/**
 * The globals whose dispatcher requests may use: this realm's (the `undici` package reads it) and the
 * main realm's, where Node's bundled undici — global `fetch` — reads it even when this code runs in a vm
 * context (a Jest test file). Node loads its bundled undici, which sets its dispatcher, on first use of
 * a fetch global: reading `Headers` does.
 */
function dispatcherRealms(): GlobalWithDispatcher[] {
  mainRealm ??= findMainRealm();
  const realms = mainRealm === globalThis ? [mainRealm] : [globalThis as GlobalWithDispatcher, mainRealm];
  for (const realm of realms) void realm.Headers;
  return realms;
}

let mainRealm: GlobalWithDispatcher | undefined;

function findMainRealm(): GlobalWithDispatcher {
  try {
    return runInThisContext('globalThis') as GlobalWithDispatcher;
  } catch {
    return globalThis as GlobalWithDispatcher; // code generation disallowed: this realm only
  }
}

function isGuarded(dispatcher: Dispatcher): boolean {
  return (dispatcher as unknown as Record<symbol, unknown>)[WRAPPED] !== undefined;
}

/**
 * A transparent proxy of `target` (same prototype, state and events) whose `dispatch` checks the lease
 * first. Methods run on the target itself, so its private state is never split between two objects.
 */
function guardedDispatcher(target: Dispatcher): Dispatcher {
  const dispatch = (options: unknown, handler: unknown): boolean => {
    assertRequestLease();
    return target.dispatch(options, handler);
  };
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(object, property) {
      if (property === WRAPPED) return object;
      if (property === 'dispatch') return dispatch;
      const value: unknown = Reflect.get(object, property, object);
      if (typeof value !== 'function') return value;
      let method = bound.get(property);
      if (method === undefined || (method as { original?: unknown }).original !== value) {
        const fn = value as (...args: unknown[]) => unknown;
        method = Object.assign((...args: unknown[]) => fn.apply(object, args), { original: value });
        bound.set(property, method);
      }
      return method;
    },
  });
}
