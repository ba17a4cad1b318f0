import { performance } from 'node:perf_hooks';
import type { IdempotencyStore } from '../stores/idempotency/idempotency-store';
import { LeaseLostError, type LeaseLostErrorCode } from '../failures/lease-lost-error';
import type { ToolLogger } from '../tools/tool-context';

/** Lease of an idempotency key while a call runs, how often it is renewed, and the local safety margin. */
export const TOOL_CALL_LEASE = {
  /**
   * 10 s (30 s until issue 23): after a worker died holding a key, the next attempt waits for this lease to run
   * out and then the takeover grace (the tool's attempt timeout) before it reconciles; renewals every 3.3 s
   * keep a live holder's key through a stall of about 3 s beyond one renewal period.
   */
  leaseMs: 10_000,
  /** Renew (and heartbeat Temporal) every leaseMs / renewDivisor. */
  renewDivisor: 3,
  /**
   * The holder's local deadline is (send time of the last successful claim or renewal) + lease − margin,
   * margin = leaseMs / marginDivisor: one renewal may fail or be late without losing the key, and the
   * holder stops well before the store could hand the key to anyone else.
   */
  marginDivisor: 3,
  /** Shortest renewal period, whatever the lease. */
  minRenewPeriodMs: 50,
  /**
   * The first Temporal heartbeat of an attempt waits this long (or one renewal period, if shorter): a call that
   * ends sooner costs no heartbeat round trip, which was most of the wrapper's cost per call (`npm run bench`).
   * An attempt that dies within this window is not counted as an execution by the next one.
   */
  firstBeatDelayMs: 250,
} as const;

/** What {@link ToolCallLease} needs. */
export interface ToolCallLeaseOptions {
  key: string;
  leaseMs: number;
  /** Temporal heartbeat of the attempt (also how cancellation reaches it). */
  heartbeat: () => void;
  log: ToolLogger;
  /** Temporal heartbeat timeout of the attempt, if any: renewals are at least three times as frequent. */
  heartbeatTimeoutMs?: number;
  /** Monotonic clock in ms (default `performance.now`): it keeps running while the process is stopped. */
  now?: () => number;
}

/**
 * The holder's side of an idempotency key's lease. The store decides ownership by its own clock; the
 * holder keeps a LOCAL deadline it can check without I/O: the moment the last successful claim or renewal
 * was SENT, plus the lease, minus a margin. Because the store computed its expiry after receiving that
 * request, the local deadline always comes before the store's expiry (a monotonic clock measures it, so
 * neither wall-clock steps nor skew between machines matter).
 *
 * The lease is lost when a renewal says another attempt took the key over, or when the deadline passes
 * (a pause, CPU starvation or a store outage kept renewals from coming through). Then {@link signal} aborts
 * and {@link assert} throws {@link LeaseLostError} from then on: a process waking from a pause cannot send.
 */
export class ToolCallLease {
  private readonly controller = new AbortController();
  private readonly now: () => number;
  private readonly marginMs: number;
  private readonly periodMs: number;
  private store: IdempotencyStore | undefined;
  private token: string | undefined;
  private deadline = Number.POSITIVE_INFINITY;
  private lostError: LeaseLostError | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private firstBeatTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** The fencing token of this ownership, once the key is owned. */
  fencingToken: string | undefined;

  constructor(private readonly options: ToolCallLeaseOptions) {
    this.now = options.now ?? (() => performance.now());
    this.marginMs = options.leaseMs / TOOL_CALL_LEASE.marginDivisor;
    const period = Math.min(options.leaseMs, options.heartbeatTimeoutMs || Number.POSITIVE_INFINITY);
    this.periodMs = Math.max(TOOL_CALL_LEASE.minRenewPeriodMs, Math.floor(period / TOOL_CALL_LEASE.renewDivisor));
  }

  /** Aborted (with a {@link LeaseLostError}) once the lease is lost. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The error the lease was lost with, if it was. */
  get lost(): LeaseLostError | undefined {
    return this.lostError;
  }

  /** The monotonic time to remember just before sending a claim. */
  mark(): number {
    return this.now();
  }

  /** The key is owned from a claim sent at `sentAt`: start renewing it. */
  owned(store: IdempotencyStore, token: string, sentAt: number, fencingToken: string | undefined): void {
    this.store = store;
    this.token = token;
    this.fencingToken = fencingToken;
    this.extend(sentAt);
    this.start();
  }

  /** Starts the periodic Temporal heartbeat (and renewal, once owned). Idempotent. */
  start(): void {
    if (this.renewTimer || this.stopped) return;
    const firstBeat = () => {
      if (!this.stopped) this.options.heartbeat();
    };
    this.firstBeatTimer = setTimeout(firstBeat, Math.min(this.periodMs, TOOL_CALL_LEASE.firstBeatDelayMs));
    this.firstBeatTimer.unref();
    this.renewTimer = setInterval(() => this.tick(), this.periodMs);
    this.renewTimer.unref();
  }

  /** Stops renewing; the lease is no longer watched. Idempotent. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.firstBeatTimer);
    clearInterval(this.renewTimer);
    clearTimeout(this.deadlineTimer);
  }

  /**
   * Throws {@link LeaseLostError} when the lease is lost or its local deadline has passed. Synchronous and
   * free of I/O: call it just before sending an effect.
   */
  assert(): void {
    this.checkDeadline();
    if (this.lostError) throw this.lostError;
  }

  /**
   * {@link assert} for a hook inside an HTTP client's send path (the request lease guard): a loss found here aborts
   * `signal` only after the client's synchronous call returns. Node 20's fetch asserts that its abort listener
   * never runs while `fetch()` is still setting up (its dispatcher is called from there), and a synchronous abort
   * from its dispatcher crashed the worker process.
   */
  assertBeforeRequest(): void {
    this.checkDeadline(true);
    if (this.lostError) throw this.lostError;
  }

  private tick(): void {
    if (this.stopped) return;
    this.checkDeadline();
    if (this.lostError) return this.stop();
    this.options.heartbeat();
    const { store, token } = this;
    if (!store || !token) return;
    const sentAt = this.now();
    store.heartbeat(this.options.key, token, this.options.leaseMs).then(
      (owned) => {
        if (owned) this.extend(sentAt);
        else this.lose('LEASE_TAKEN_OVER', `Another attempt took over the idempotency key ${this.options.key}.`);
      },
      (error: unknown) =>
        this.options.log.warn('Could not renew the idempotency lease.', {
          key: this.options.key,
          error: String(error),
        }),
    );
  }

  private extend(sentAt: number): void {
    if (this.lostError) return;
    const candidate = sentAt + this.options.leaseMs - this.marginMs;
    this.deadline = this.deadline === Number.POSITIVE_INFINITY ? candidate : Math.max(this.deadline, candidate);
    if (this.stopped) return;
    clearTimeout(this.deadlineTimer);
    this.deadlineTimer = setTimeout(() => this.checkDeadline(), Math.max(0, this.deadline - this.now()) + 1);
    this.deadlineTimer.unref();
  }

  private checkDeadline(deferAbort = false): void {
    if (this.lostError || this.token === undefined || this.now() < this.deadline) return;
    this.lose(
      'LEASE_EXPIRED',
      `The lease on idempotency key ${this.options.key} ran out before it could be renewed (the process was paused, starved or cut off from the store).`,
      deferAbort,
    );
  }

  private lose(code: LeaseLostErrorCode, message: string, deferAbort = false): void {
    if (this.lostError) return;
    const lostError = new LeaseLostError(message, code);
    this.lostError = lostError;
    this.options.log.warn('Lost the idempotency lease; stopping the tool.', { key: this.options.key, code });
    clearTimeout(this.deadlineTimer);
    if (deferAbort) queueMicrotask(() => this.controller.abort(lostError));
    else this.controller.abort(lostError);
  }
}
