/**
 * A signal that aborts when any of several does: what the model and tool activities hand to a provider or a
 * tool, made from the activity's cancellation and the call's own deadline or lease.
 */

/** A combined signal and the way to let go of its sources. */
export interface CombinedSignal {
  signal: AbortSignal;
  /** Removes its listeners from the sources (after the call: the sources may live on). */
  dispose(): void;
}

/**
 * One signal that aborts, with the reason of the first, as soon as any of `signals` does. Not
 * `AbortSignal.any`: Node keeps a signal made by it alive, with everything its `abort` listeners hold, for as
 * long as it has one and has not aborted (`gcPersistentSignals`). A model provider or a tool that adds a listener
 * and never removes it (a common pattern) then kept each call's activity, its context and timers in memory for
 * good: `npm run bench:scale` measured ~85 KB of the worker's heap per run completed. The signal of a plain
 * `AbortController` is collected with its listeners once the call lets go of it.
 *
 * Order: it aborts from a listener on the source, so the source's listeners added before this call run before the
 * combined signal's, and those added after run after them (`AbortSignal.any` aborts after all of them). A caller
 * whose own listener must settle first (the model call's cancellation) adds it before calling this.
 */
export function combinedSignal(signals: readonly AbortSignal[]): CombinedSignal {
  const controller = new AbortController();
  const aborted = signals.find((source) => source.aborted);
  if (aborted) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, dispose: () => undefined };
  }
  const removals: Array<() => void> = [];
  const dispose = (): void => {
    for (const remove of removals.splice(0)) remove();
  };
  for (const source of signals) {
    const onAbort = (): void => {
      controller.abort(source.reason);
      dispose();
    };
    source.addEventListener('abort', onAbort, { once: true });
    removals.push(() => source.removeEventListener('abort', onAbort));
  }
  return { signal: controller.signal, dispose };
}
