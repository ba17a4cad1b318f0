import { DurableToolsError } from '../contract/durable-tools-error';

/** Codes of {@link LeaseLostError}. */
export type LeaseLostErrorCode = 'LEASE_EXPIRED' | 'LEASE_TAKEN_OVER';

/**
 * The call no longer owns its idempotency key: its lease ran out before a renewal came through (the
 * process was paused, starved of CPU, or cut off from the store), or another attempt took the key over.
 * `ctx.assertLease()` throws it, and `ctx.signal` is aborted with it: the tool must not start an effect.
 */
export class LeaseLostError extends DurableToolsError<LeaseLostErrorCode> {
  override readonly name = 'LeaseLostError';
}
