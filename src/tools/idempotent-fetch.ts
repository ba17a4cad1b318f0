import type { ToolContext } from './tool-context';

/** The header that carries the call's idempotency key (IETF draft "The Idempotency-Key HTTP Header Field"). */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** The header that carries the call's fencing token ({@link ToolContext.fencingToken}). */
export const FENCING_TOKEN_HEADER = 'Fencing-Token';

/**
 * What {@link withIdempotencyKey} uses of the tool context: pass the tool's `ctx` itself. `assertLease` is
 * required: an options object built by hand without the lease check does not compile (and, from
 * JavaScript, throws a `TypeError` instead of sending unchecked).
 */
export type IdempotentRequestContext = Pick<ToolContext, 'idempotencyKey' | 'signal' | 'assertLease'> &
  Partial<Pick<ToolContext, 'fencingToken'>>;

/**
 * Request options for `fetch` that forward the call's idempotency key as an `Idempotency-Key` header and
 * its fencing token as a `Fencing-Token` header, and abort the request when the activity is cancelled or
 * loses its lease. It first calls `ctx.assertLease()`, so call it just before sending: a call whose lease
 * ran out (a paused or starved process) throws `LeaseLostError` here instead of sending. (Inside a tool
 * attempt the worker checks every HTTP request again just before it leaves the process.) A header or
 * signal already in `init` is kept. A `ctx` without `assertLease` throws a `TypeError`.
 *
 * @example
 * ```ts
 * const response = await fetch('https://pay.example/charges', withIdempotencyKey(ctx, { method: 'POST', body }));
 * ```
 */
export function withIdempotencyKey(ctx: IdempotentRequestContext, init: RequestInit = {}): RequestInit {
  if (typeof ctx?.assertLease !== 'function') {
    throw new TypeError(
      'withIdempotencyKey / idempotentFetch need the tool context (`ctx`) with its lease check `assertLease`; got an object without one, so the request was not sent.',
    );
  }
  ctx.assertLease();
  const headers = new Headers(init.headers);
  if (!headers.has(IDEMPOTENCY_KEY_HEADER)) headers.set(IDEMPOTENCY_KEY_HEADER, ctx.idempotencyKey);
  if (ctx.fencingToken !== undefined && !headers.has(FENCING_TOKEN_HEADER)) {
    headers.set(FENCING_TOKEN_HEADER, ctx.fencingToken);
  }
  return { ...init, headers, signal: init.signal ?? ctx.signal };
}

/**
 * `fetch` with the call's idempotency key and fencing token forwarded, the lease asserted just before
 * sending, and the activity's cancellation and lease loss wired in.
 *
 * @example
 * ```ts
 * const response = await idempotentFetch(ctx, 'https://pay.example/charges', { method: 'POST', body });
 * await throwForHttpStatus(response);
 * ```
 */
export function idempotentFetch(
  ctx: IdempotentRequestContext,
  input: string | URL | Request,
  init?: RequestInit,
): Promise<Response> {
  try {
    return fetch(input, withIdempotencyKey(ctx, init));
  } catch (error) {
    return Promise.reject(error);
  }
}
