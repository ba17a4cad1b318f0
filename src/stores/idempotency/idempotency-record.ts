import { randomUUID } from 'node:crypto';
import { strictJsonStringify } from './canonical-json';
import { IDEMPOTENCY_DEFAULTS } from './idempotency-defaults';
import type {
  BeginOptions,
  BeginOutcome,
  BeginStarted,
  FinishOptions,
  LookupOutcome,
  StoredFailure,
  TakeOverOptions,
} from './idempotency-store';
import { IdempotencyStoreError, MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency-store-error';

/** Longest owner, fingerprint or token a store accepts. */
const MAX_LABEL_LENGTH = 1024;

/** Options every store takes. */
export interface IdempotencyStoreBaseOptions {
  /** How long records are kept after they finish or their last lease runs out. Default 24 h. */
  retentionMs?: number;
  /** The store's clock, ms since the epoch. Default `Date.now`. Tests inject a fake one. */
  clock?: () => number;
}

/** Where a record is in its life. */
export type RecordState = 'in_progress' | 'completed' | 'failed';

/** One row of the store, as the memory and SQLite stores keep it (JSON as text). */
export interface IdempotencyRecord {
  key: string;
  fingerprint: string;
  state: RecordState;
  /** The current fencing token; after completion, the token that completed it. */
  token: string;
  owner: string;
  /** Owner whose lease was taken over most recently, if any. */
  previousOwner: string | null;
  /** End of the lease of an in-progress record; null once finished. */
  leaseExpiresAt: number | null;
  /** JSON of the result; null when completed with `undefined` or not completed. */
  resultJson: string | null;
  /** JSON of the stored failure when failed. */
  errorJson: string | null;
  takeovers: number;
  createdAt: number;
  updatedAt: number;
  /** The record counts as absent from this instant on, and `reap` deletes it. */
  expiresAt: number;
}

/** What `begin` decided: the outcome to return and, when ownership changes hands, the record to write. */
export interface BeginDecision {
  outcome: BeginOutcome;
  write?: IdempotencyRecord;
}

/** Normalised arguments of `begin`. */
export interface BeginRequest {
  key: string;
  fingerprint: string;
  owner: string;
  leaseMs: number;
  takeoverGraceMs: number;
  /** A holder proved dead: its in-progress record is taken over at once (`takeOverDeadHolder`). */
  deadOwner?: string;
}

/**
 * The begin state machine shared by the stores: memory and SQLite decide inside one transaction, Postgres
 * decides on the record it read and claims it with a compare-and-set `UPDATE`.
 */
export function decideBegin(
  existing: IdempotencyRecord | undefined,
  request: BeginRequest,
  now: number,
  retentionMs: number,
  token: string = randomUUID(),
): BeginDecision {
  if (existing === undefined || existing.expiresAt <= now) return startFresh(request, now, retentionMs, token);
  if (existing.fingerprint !== request.fingerprint) {
    return { outcome: { state: 'conflict', storedFingerprint: existing.fingerprint } };
  }
  if (existing.state === 'completed') {
    return { outcome: { state: 'completed', result: parseResult(existing.resultJson) } };
  }
  if (existing.state === 'failed') {
    return { outcome: { state: 'failed', error: parseFailure(existing.errorJson) } };
  }
  const leaseExpiresAt = now + request.leaseMs;
  const currentLease = existing.leaseExpiresAt ?? 0;
  const holderDead = request.deadOwner !== undefined && existing.owner === request.deadOwner;
  if (!holderDead && currentLease + request.takeoverGraceMs > now) {
    const retryAfterMs = currentLease + request.takeoverGraceMs - now;
    return { outcome: { state: 'in_flight', leaseExpiresAt: currentLease, owner: existing.owner, retryAfterMs } };
  }
  const takeovers = existing.takeovers + 1;
  return {
    outcome: {
      state: 'outcome_unknown',
      token,
      leaseExpiresAt,
      previousOwner: existing.owner,
      takeovers,
      fencingToken: String(now),
      ...(holderDead ? { previousHolderDead: true } : {}),
    },
    write: {
      ...existing,
      token,
      owner: request.owner,
      previousOwner: existing.owner,
      leaseExpiresAt,
      takeovers,
      updatedAt: now,
      expiresAt: leaseExpiresAt + retentionMs,
    },
  };
}

/**
 * The decision for a key with no live record: `started`, with the new in-progress record to write. Stores
 * whose fast path is one conditional insert (SQLite) write this record without reading first.
 */
export function startFresh(
  request: BeginRequest,
  now: number,
  retentionMs: number,
  token: string = randomUUID(),
): BeginDecision & { outcome: BeginStarted; write: IdempotencyRecord } {
  const leaseExpiresAt = now + request.leaseMs;
  return {
    outcome: { state: 'started', token, leaseExpiresAt, fencingToken: String(now) },
    write: {
      key: request.key,
      fingerprint: request.fingerprint,
      state: 'in_progress',
      token,
      owner: request.owner,
      previousOwner: null,
      leaseExpiresAt,
      resultJson: null,
      errorJson: null,
      takeovers: 0,
      createdAt: now,
      updatedAt: now,
      expiresAt: leaseExpiresAt + retentionMs,
    },
  };
}

/**
 * What `lookup` answers and `insertIfAbsent` decides, shared by the stores: `absent` (insert) for no record,
 * one past retention or an in-progress one whose lease ran out; the record's own answer otherwise.
 */
export function decideLookup(existing: IdempotencyRecord | undefined, fingerprint: string, now: number): LookupOutcome {
  if (existing === undefined || existing.expiresAt <= now) return { state: 'absent' };
  if (existing.fingerprint !== fingerprint) return { state: 'conflict', storedFingerprint: existing.fingerprint };
  if (existing.state === 'completed') return { state: 'completed', result: parseResult(existing.resultJson) };
  if (existing.state === 'failed') return { state: 'failed', error: parseFailure(existing.errorJson) };
  const leaseExpiresAt = existing.leaseExpiresAt ?? 0;
  if (leaseExpiresAt > now) {
    return { state: 'in_flight', leaseExpiresAt, owner: existing.owner, retryAfterMs: leaseExpiresAt - now };
  }
  return { state: 'absent' };
}

/** The completed record `insertIfAbsent` writes: a new token (which fences any earlier holder off). */
export function insertedRecord(
  key: string,
  fingerprint: string,
  resultJson: string | null,
  now: number,
  retentionMs: number,
  previous?: IdempotencyRecord,
): IdempotencyRecord {
  return {
    key,
    fingerprint,
    state: 'completed',
    token: randomUUID(),
    owner: INSERTED_OWNER,
    previousOwner: previous && previous.expiresAt > now ? previous.owner : null,
    leaseExpiresAt: null,
    resultJson,
    errorJson: null,
    takeovers: 0,
    createdAt: now,
    updatedAt: now,
    expiresAt: now + retentionMs,
  };
}

/** The owner recorded for a result written by `insertIfAbsent` (nobody held a lease on it). */
export const INSERTED_OWNER = 'insert-if-absent';

/** Checks and normalises the arguments of `lookup` and `insertIfAbsent`. */
export function checkLookup(key: unknown, fingerprint: unknown): { key: string; fingerprint: string } {
  return { key: checkKey(key), fingerprint: checkLabel(fingerprint, 'Fingerprint') };
}

/** Why a write with `token` was refused, for the `LEASE_LOST` message. */
export function leaseLostMessage(
  key: string,
  current: { state: RecordState; token: string; owner: string } | undefined,
  token: string,
): string {
  if (current === undefined) {
    return `Idempotency key "${key}" is no longer held by this token: the record was released or reaped.`;
  }
  if (current.token !== token) {
    return `Idempotency key "${key}" is no longer held by this token: it was taken over by "${current.owner}".`;
  }
  return `Idempotency key "${key}" is already ${current.state} by this token with another outcome.`;
}

/** Throws `LEASE_LOST` unless the record was already finished in `wanted` state by this very token. */
export function acceptRepeatedFinish(
  key: string,
  current: { state: RecordState; token: string; owner: string } | undefined,
  token: string,
  wanted: RecordState,
): void {
  if (current !== undefined && current.token === token && current.state === wanted) return;
  throw new IdempotencyStoreError(leaseLostMessage(key, current, token), 'LEASE_LOST');
}

/** Checks a key. */
export function checkKey(key: unknown): string {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new IdempotencyStoreError(
      `Idempotency key must be a non-empty string of at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`,
      'INVALID_KEY',
    );
  }
  return key;
}

function checkLabel(value: unknown, what: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_LABEL_LENGTH) {
    throw new IdempotencyStoreError(
      `${what} must be a non-empty string of at most ${MAX_LABEL_LENGTH} characters.`,
      'INVALID_ARGUMENT',
    );
  }
  return value;
}

/** Checks a fencing token. */
export function checkToken(token: unknown): string {
  return checkLabel(token, 'Token');
}

/** Checks a positive duration in ms. */
export function checkDuration(ms: unknown, what: string): number {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) {
    throw new IdempotencyStoreError(`${what} must be a positive number of milliseconds.`, 'INVALID_ARGUMENT');
  }
  return Math.ceil(ms);
}

/** Checks and normalises the arguments of `takeOverDeadHolder`. */
export function checkTakeOver(key: unknown, fingerprint: unknown, options: TakeOverOptions | undefined): BeginRequest {
  return { ...checkBegin(key, fingerprint, options), deadOwner: checkLabel(options?.deadOwner, 'deadOwner') };
}

/** Checks and normalises the arguments of `begin`. */
export function checkBegin(key: unknown, fingerprint: unknown, options: BeginOptions | undefined): BeginRequest {
  return {
    key: checkKey(key),
    fingerprint: checkLabel(fingerprint, 'Fingerprint'),
    owner: checkLabel(options?.owner, 'Owner'),
    leaseMs: checkDuration(options?.leaseMs ?? IDEMPOTENCY_DEFAULTS.leaseMs, 'leaseMs'),
    takeoverGraceMs:
      options?.takeoverGraceMs === undefined || options.takeoverGraceMs === 0
        ? 0
        : checkDuration(options.takeoverGraceMs, 'takeoverGraceMs'),
  };
}

/** Retention from options, checked. */
export function retentionFrom(options: IdempotencyStoreBaseOptions): number {
  return checkDuration(options.retentionMs ?? IDEMPOTENCY_DEFAULTS.retentionMs, 'retentionMs');
}

/** How long a finished record is kept: its own `options.retentionMs` (checked), else the store's retention. */
export function finishRetention(options: FinishOptions | undefined, storeRetentionMs: number): number {
  const ms = options?.retentionMs;
  if (ms === undefined) return storeRetentionMs;
  const checked = checkDuration(ms, 'retentionMs');
  if (checked > IDEMPOTENCY_DEFAULTS.maxRecordRetentionMs) {
    throw new IdempotencyStoreError(
      `retentionMs must be at most ${IDEMPOTENCY_DEFAULTS.maxRecordRetentionMs} ms (10 years).`,
      'INVALID_ARGUMENT',
    );
  }
  return checked;
}

/** JSON text of a result; null for `undefined` (replayed as `undefined`). */
export function serializeResult(result: unknown): string | null {
  return result === undefined ? null : strictJsonStringify(result);
}

/** JSON text of a permanent failure, after checking its shape. */
export function serializeFailure(error: StoredFailure): string {
  if (
    typeof error !== 'object' ||
    error === null ||
    typeof error.code !== 'string' ||
    typeof error.message !== 'string'
  ) {
    throw new IdempotencyStoreError('A stored failure needs a string `code` and `message`.', 'INVALID_ARGUMENT');
  }
  return strictJsonStringify(error);
}

/** The result back from its JSON text. */
export function parseResult(json: string | null): unknown {
  return json === null ? undefined : JSON.parse(json);
}

/** The failure back from its JSON text. */
export function parseFailure(json: string | null): StoredFailure {
  return (
    json === null ? { code: 'UNKNOWN', message: 'The stored failure is missing.' } : JSON.parse(json)
  ) as StoredFailure;
}
