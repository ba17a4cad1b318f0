import { WorkerThreadClient } from '@temporalio/worker/lib/workflow/threaded-vm';

/**
 * Lets the chaos worker stop itself while its workflow thread runs an activation — the moment at which a
 * pause used to kill the worker (docs/pauses.md): the workflow code runs inside `vm.runInContext` with the
 * SDK's deadlock timeout, and a pause there makes the timeout fire mid-activation after SIGCONT.
 *
 * It wraps the SDK's `WorkerThreadClient.send` (the main thread's side of the workflow thread; internal,
 * so this is test support only). It measures how long activations take to come back; when `shouldStop()`
 * says so, right after an activation is posted to the workflow thread it lets the thread work on it for a
 * random part of the last round trip, then SIGSTOPs the process — so the stop lands while the thread is
 * inside the activation, whatever the load.
 */
export function installActivationPausePoint(options: { shouldStop: () => boolean; random?: () => number }): void {
  type Send = (this: WorkerThreadClient, input: { type: string }) => Promise<unknown>;
  const random = options.random ?? Math.random;
  const prototype = WorkerThreadClient.prototype as unknown as { send: Send };
  const send = prototype.send;
  let lastRoundTripMs = 2;
  prototype.send = function sendThenMaybeStop(input) {
    const postedAt = performance.now();
    const sent = send.call(this, input); // posts the request synchronously
    if (input.type !== 'activate-workflow') return sent;
    void sent.then(
      () => (lastRoundTripMs = performance.now() - postedAt),
      () => undefined,
    );
    if (options.shouldStop()) {
      const until = postedAt + random() * lastRoundTripMs;
      while (performance.now() < until) {
        // the workflow thread picks the activation up and runs it meanwhile
      }
      process.kill(process.pid, 'SIGSTOP');
    }
    return sent;
  };
}
