import type { ToolContext } from './tool-context';

/** The header that carries the call's idempotency key (IETF draft "The Idempotency-Key HTTP Header Field"). */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/**
 * Request options for `fetch` that forward the call's idempotency key as an `Idempotency-Key` header and
 * abort the request when the activity is cancelled. A header or signal already in `init` is kept.
 *
 * @example
 * ```ts
 * const response = await fetch('https://pay.example/charges', withIdempotencyKey(ctx, { method: 'POST', body }));
 * ```
 */
export function withIdempotencyKey(
  ctx: Pick<ToolContext, 'idempotencyKey' | 'signal'>,
  init: RequestInit = {},
): RequestInit {
  const headers = new Headers(init.headers);
  if (!headers.has(IDEMPOTENCY_KEY_HEADER)) headers.set(IDEMPOTENCY_KEY_HEADER, ctx.idempotencyKey);
  return { ...init, headers, signal: init.signal ?? ctx.signal };
}

/**
 * `fetch` with the call's idempotency key forwarded and the activity's cancellation wired in.
 *
 * @example
 * ```ts
 * const response = await idempotentFetch(ctx, 'https://pay.example/charges', { method: 'POST', body });
 * await throwForHttpStatus(response);
 * ```
 */
export function idempotentFetch(
  ctx: Pick<ToolContext, 'idempotencyKey' | 'signal'>,
  input: string | URL | Request,
  init?: RequestInit,
): Promise<Response> {
  return fetch(input, withIdempotencyKey(ctx, init));
}
