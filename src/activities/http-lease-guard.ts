import { ClientRequest } from 'node:http';
import { assertRequestLease } from './request-lease-scope';

/** The internal method through which a `ClientRequest` writes (headers first) — shared by http and https. */
type Send = (this: ClientRequest, ...args: unknown[]) => boolean;

interface GuardableRequest {
  _send: Send;
  _headerSent?: boolean;
}

const prototype = ClientRequest.prototype as unknown as GuardableRequest & Record<symbol, unknown>;
/** Set on the prototype while the hook is installed: the `_send` it replaced (inherited or own). */
const ORIGINAL = Symbol.for('durable-tools.leaseGuard.originalSend');
const HAD_OWN = Symbol.for('durable-tools.leaseGuard.hadOwnSend');

/**
 * Hooks `ClientRequest` (every `node:http` and `node:https` request, whatever library made it) so that
 * its first write — the request line and headers, on `end()`, `write()` or `flushHeaders()` — first runs
 * the running attempt's lease check. A refusal destroys the request with the `LeaseLostError` (it
 * reaches the caller as the request's `error` event) and writes nothing. Later writes of a request
 * whose headers went out before the deadline are not checked: it is already in flight.
 *
 * Not the `http.client.request.start` diagnostics channel: on Node 20 it fires when the request has
 * finished writing, too late, and an exception in a subscriber never reaches the caller. Idempotent.
 */
export function installHttpLeaseGuard(): void {
  if (Object.prototype.hasOwnProperty.call(prototype, ORIGINAL)) return;
  const original = prototype._send;
  // The unit tests prove the hook on the supported Node versions; a Node without this method gets none.
  if (typeof original !== 'function') return;
  prototype[ORIGINAL] = original;
  prototype[HAD_OWN] = Object.prototype.hasOwnProperty.call(prototype, '_send');
  prototype._send = function guardedSend(this: ClientRequest, ...args: unknown[]): boolean {
    if (!(this as unknown as GuardableRequest)._headerSent) {
      try {
        assertRequestLease();
      } catch (error) {
        this.destroy(error as Error);
        return false;
      }
    }
    return original.apply(this, args);
  };
}

/** Puts the original method back. */
export function uninstallHttpLeaseGuard(): void {
  if (!Object.prototype.hasOwnProperty.call(prototype, ORIGINAL)) return;
  if (prototype[HAD_OWN]) prototype._send = prototype[ORIGINAL] as Send;
  else delete (prototype as Partial<GuardableRequest>)._send;
  delete prototype[ORIGINAL];
  delete prototype[HAD_OWN];
}
