import { IDEMPOTENCY_DEFAULTS } from './idempotency-defaults';
import {
  acceptRepeatedFinish,
  checkBegin,
  checkDuration,
  checkKey,
  checkLookup,
  checkTakeOver,
  checkToken,
  decideBegin,
  decideLookup,
  finishRetention,
  insertedRecord,
  retentionFrom,
  serializeFailure,
  serializeResult,
  type BeginRequest,
  type IdempotencyRecord,
  type IdempotencyStoreBaseOptions,
} from './idempotency-record';
import type {
  BeginOptions,
  BeginOutcome,
  FinishOptions,
  IdempotencyStore,
  InsertOutcome,
  LookupOutcome,
  StoredFailure,
  TakeOverOptions,
} from './idempotency-store';
import { IdempotencyStoreError } from './idempotency-store-error';

/** Options of {@link MemoryIdempotencyStore}. */
export type MemoryIdempotencyStoreOptions = IdempotencyStoreBaseOptions;

/**
 * An {@link IdempotencyStore} in process memory, with exactly the semantics of the durable stores (results
 * are stored as JSON text, so a replay returns a fresh copy). For unit tests of code that uses a store; it
 * survives no restart and is not shared between processes.
 *
 * @example
 * ```ts
 * let now = 0;
 * const store = new MemoryIdempotencyStore({ clock: () => now });
 * ```
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly records = new Map<string, IdempotencyRecord>();
  private readonly retentionMs: number;
  private readonly clock: () => number;
  private closed = false;

  constructor(options: MemoryIdempotencyStoreOptions = {}) {
    this.retentionMs = retentionFrom(options);
    this.clock = options.clock ?? Date.now;
  }

  /** {@inheritDoc IdempotencyStore.begin} */
  async begin(key: string, fingerprint: string, options: BeginOptions): Promise<BeginOutcome> {
    this.checkOpen();
    return this.decide(checkBegin(key, fingerprint, options));
  }

  /** {@inheritDoc IdempotencyStore.takeOverDeadHolder} */
  async takeOverDeadHolder(key: string, fingerprint: string, options: TakeOverOptions): Promise<BeginOutcome> {
    this.checkOpen();
    return this.decide(checkTakeOver(key, fingerprint, options));
  }

  private decide(request: BeginRequest): BeginOutcome {
    const decision = decideBegin(this.records.get(request.key), request, this.clock(), this.retentionMs);
    if (decision.write) this.records.set(request.key, decision.write);
    return decision.outcome;
  }

  /** {@inheritDoc IdempotencyStore.heartbeat} */
  async heartbeat(key: string, token: string, leaseMs: number = IDEMPOTENCY_DEFAULTS.leaseMs): Promise<boolean> {
    this.checkOpen();
    const record = this.owned(checkKey(key), checkToken(token));
    const lease = checkDuration(leaseMs, 'leaseMs');
    if (record === undefined) return false;
    const now = this.clock();
    record.leaseExpiresAt = now + lease;
    record.updatedAt = now;
    record.expiresAt = record.leaseExpiresAt + this.retentionMs;
    return true;
  }

  /** {@inheritDoc IdempotencyStore.complete} */
  async complete(key: string, token: string, result: unknown, options?: FinishOptions): Promise<void> {
    this.checkOpen();
    const retention = finishRetention(options, this.retentionMs);
    this.finish(checkKey(key), checkToken(token), 'completed', serializeResult(result), null, retention);
  }

  /** {@inheritDoc IdempotencyStore.fail} */
  async fail(key: string, token: string, error: StoredFailure, options?: FinishOptions): Promise<void> {
    this.checkOpen();
    const retention = finishRetention(options, this.retentionMs);
    this.finish(checkKey(key), checkToken(token), 'failed', null, serializeFailure(error), retention);
  }

  /** {@inheritDoc IdempotencyStore.release} */
  async release(key: string, token: string): Promise<boolean> {
    this.checkOpen();
    const checkedKey = checkKey(key);
    if (this.owned(checkedKey, checkToken(token)) === undefined) return false;
    this.records.delete(checkedKey);
    return true;
  }

  /** {@inheritDoc IdempotencyStore.lookup} */
  async lookup(key: string, fingerprint: string): Promise<LookupOutcome> {
    this.checkOpen();
    const request = checkLookup(key, fingerprint);
    return decideLookup(this.records.get(request.key), request.fingerprint, this.clock());
  }

  /** {@inheritDoc IdempotencyStore.insertIfAbsent} */
  async insertIfAbsent(
    key: string,
    fingerprint: string,
    result: unknown,
    options?: FinishOptions,
  ): Promise<InsertOutcome> {
    this.checkOpen();
    const request = checkLookup(key, fingerprint);
    const retention = finishRetention(options, this.retentionMs);
    const json = serializeResult(result);
    const now = this.clock();
    const existing = this.records.get(request.key);
    const found = decideLookup(existing, request.fingerprint, now);
    if (found.state !== 'absent') return found;
    this.records.set(request.key, insertedRecord(request.key, request.fingerprint, json, now, retention, existing));
    return { state: 'inserted' };
  }

  /** {@inheritDoc IdempotencyStore.reap} */
  async reap(now: number = this.clock()): Promise<number> {
    this.checkOpen();
    let count = 0;
    for (const [key, record] of this.records) {
      if (record.expiresAt <= now) {
        this.records.delete(key);
        count++;
      }
    }
    return count;
  }

  /** {@inheritDoc IdempotencyStore.close} */
  async close(): Promise<void> {
    this.closed = true;
    this.records.clear();
  }

  private owned(key: string, token: string): IdempotencyRecord | undefined {
    const record = this.records.get(key);
    return record !== undefined &&
      record.state === 'in_progress' &&
      record.token === token &&
      record.expiresAt > this.clock()
      ? record
      : undefined;
  }

  private finish(
    key: string,
    token: string,
    state: 'completed' | 'failed',
    resultJson: string | null,
    errorJson: string | null,
    retentionMs: number,
  ): void {
    const record = this.owned(key, token);
    if (record === undefined) {
      const current = this.records.get(key);
      acceptRepeatedFinish(key, current && current.expiresAt > this.clock() ? current : undefined, token, state);
      return;
    }
    const now = this.clock();
    Object.assign(record, {
      state,
      resultJson,
      errorJson,
      leaseExpiresAt: null,
      updatedAt: now,
      expiresAt: now + retentionMs,
    });
  }

  private checkOpen(): void {
    if (this.closed) throw new IdempotencyStoreError('The idempotency store is closed.', 'STORE_CLOSED');
  }
}
