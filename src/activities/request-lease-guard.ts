import { installFetchLeaseGuard, uninstallFetchLeaseGuard } from './fetch-lease-guard';
import { installHttpLeaseGuard, uninstallHttpLeaseGuard } from './http-lease-guard';
import { runInRequestLeaseScope } from './request-lease-scope';
import type { ToolCallLease } from './tool-call-lease';
import type { LeaseLostError } from '../failures/lease-lost-error';

/**
 * Installs the lease check on every HTTP request of this process: global `fetch` and undici through the
 * global dispatcher, `node:http` / `node:https` (axios, got, node-fetch, most SDKs) through `ClientRequest`.
 * Idempotent. Outside a tool attempt nothing changes. `createToolActivities` calls it.
 */
export function installRequestLeaseGuard(): void {
  installFetchLeaseGuard();
  installHttpLeaseGuard();
}

/** Removes both hooks (the benchmark compares with and without). Not for production use. */
export function uninstallRequestLeaseGuard(): void {
  uninstallFetchLeaseGuard();
  uninstallHttpLeaseGuard();
}

/**
 * The request guard of one tool attempt. While the attempt runs, every request from the tool's async
 * context is checked against the lease's local deadline (the last claim or renewal sent, plus the lease,
 * minus the safety margin) and refused with the lease's `LeaseLostError` once it has passed or another
 * attempt took the key over. After the attempt ended, requests still made from its context (a background
 * timer a library started there) are left alone, unless the attempt lost its lease: a stale holder's
 * stragglers stay refused.
 */
export class AttemptRequestGuard {
  private ended = false;
  /** The error of the first request this guard refused, if it refused one. */
  refused: LeaseLostError | undefined;

  constructor(private readonly lease: ToolCallLease) {}

  /** Runs the tool implementation inside this guard (re-installing the fetch hook if it was replaced). */
  run<T>(fn: () => T): T {
    installFetchLeaseGuard();
    return runInRequestLeaseScope(this, fn);
  }

  /** The hook's check: see the class comment. */
  check(): void {
    if (this.ended && !this.lease.lost) return;
    try {
      this.lease.assertBeforeRequest();
    } catch (error) {
      this.refused ??= error as LeaseLostError;
      throw error;
    }
  }

  /** The attempt is over (its outcome settled). */
  end(): void {
    this.ended = true;
  }
}
