/**
 * A permanent failure stored under a key and replayed to every later `begin` with the same arguments.
 * Must be JSON; fields beyond `code` and `message` are kept as they are (e.g. a whole tool error observation).
 */
export interface StoredFailure {
  /** Machine-readable code, e.g. `PERMISSION_DENIED`. */
  code: string;
  message: string;
  /** The next step for the caller or the model. */
  hint?: string;
  /** Anything else worth replaying (JSON). */
  details?: unknown;
}

/** Options of {@link IdempotencyStore.begin}. */
export interface BeginOptions {
  /** Who takes the key (worker, workflow, attempt); shown to competing callers and after a takeover. */
  owner: string;
  /** How long the new lease lasts before another caller may take the key over. Default 30 s. */
  leaseMs?: number;
  /**
   * Takeover grace: a key whose lease ran out less than this long ago is still `in_flight`, not yet
   * `outcome_unknown`. A request the old holder sent just before its lease ended gets this long to land at
   * the downstream before the new owner asks the downstream what happened. Default 0.
   */
  takeoverGraceMs?: number;
}

/** Options of {@link IdempotencyStore.takeOverDeadHolder}. */
export interface TakeOverOptions extends BeginOptions {
  /**
   * The owner label, exactly as `begin` answered it in `in_flight`, of a holder the caller has proved dead
   * (its process no longer exists): an in-progress record still held by this owner is taken over at once,
   * whatever is left of its lease and takeover grace.
   */
  deadOwner: string;
}

/** Options of {@link IdempotencyStore.complete} and {@link IdempotencyStore.fail}. */
export interface FinishOptions {
  /**
   * How long THIS record is kept after it finished, instead of the store's `retentionMs` (default 24 h):
   * a long call's `longCall.resultRetention`. A positive number of ms, at most
   * `IDEMPOTENCY_DEFAULTS.maxRecordRetentionMs` (10 years); else `INVALID_ARGUMENT` and nothing is written.
   */
  retentionMs?: number;
  /**
   * `insertIfAbsent` and `complete` only: the record may become durable with the store's next synchronous
   * commit instead of with its own. For a value no effect depends on until a later write that the store does
   * make durable: a model turn, whose calls with effects each claim their key (`begin`) in the same store
   * first, lost in an operating-system crash before that, is computed again as if never recorded; a tool
   * call's result, lost that way, leaves its key in flight, so a later attempt reconciles or stops with
   * `OUTCOME_UNKNOWN` and never runs the effect again. The SQLite store commits such a write without an fsync
   * (`synchronous=NORMAL` for that statement): in WAL mode the next commit with `FULL` makes every earlier one
   * durable too. Other stores may ignore it.
   */
  durableWithNextCommit?: boolean;
}

/** `begin` found no live record (new key, released, or past retention): the caller owns the key and executes. */
export interface BeginStarted {
  state: 'started';
  /** Ownership token: pass it to `heartbeat`, `complete`, `fail` and `release`. */
  token: string;
  /** When the lease runs out unless extended (ms since the epoch). */
  leaseExpiresAt: number;
  /** See {@link BeginOutcomeUnknown.fencingToken}. */
  fencingToken: string;
}

/** The key completed earlier with the same fingerprint: replay `result`, do not execute again. */
export interface BeginCompleted {
  state: 'completed';
  /** The stored result, as `JSON.parse` returns it (`undefined` when the call returned `undefined`). */
  result: unknown;
}

/** The key failed permanently earlier with the same fingerprint: replay `error`, do not execute again. */
export interface BeginFailed {
  state: 'failed';
  error: StoredFailure;
}

/**
 * The key is stored with another fingerprint: it was used with different arguments (IDEMPOTENCY_CONFLICT,
 * HTTP 422 in the IETF draft). Checked before any other state, so it wins over in-flight and replay.
 */
export interface BeginConflict {
  state: 'conflict';
  storedFingerprint: string;
}

/** Another caller holds a live lease on the key (HTTP 409 in the IETF draft): transient, try again later. */
export interface BeginInFlight {
  state: 'in_flight';
  leaseExpiresAt: number;
  owner: string;
  /** How long to wait, by the store's clock, before the key may be taken over (lease plus takeover grace). */
  retryAfterMs: number;
}

/**
 * The previous holder's lease ran out without a `complete`, `fail` or `release`: it crashed or hung, and its
 * effect may or may not have happened. THIS caller now owns the key with a fresh lease and token (the old
 * token is fenced off) and must reconcile with the downstream, re-run an idempotent call, or give up with
 * `fail`.
 */
export interface BeginOutcomeUnknown {
  state: 'outcome_unknown';
  token: string;
  leaseExpiresAt: number;
  previousOwner: string;
  /** How many times this key has been taken over so far (1 on the first takeover): a crash-loop signal. */
  takeovers: number;
  /**
   * Fencing token of this ownership for the downstream: a decimal integer (the store's time of the claim in
   * ms) that grows with every new owner of the key as long as the store's clock does not step back. A
   * downstream that remembers the highest token per key and refuses lower ones rejects a stale holder.
   */
  fencingToken: string;
  /**
   * True when the key was taken over from a holder the caller proved dead
   * ({@link IdempotencyStore.takeOverDeadHolder}), before its lease and takeover grace ran out.
   */
  previousHolderDead?: boolean;
}

/** What {@link IdempotencyStore.begin} found, discriminated by `state`. */
export type BeginOutcome =
  BeginStarted | BeginCompleted | BeginFailed | BeginConflict | BeginInFlight | BeginOutcomeUnknown;

/**
 * What {@link IdempotencyStore.lookup} found: `absent` when {@link IdempotencyStore.insertIfAbsent} would
 * insert now (no record, one past retention, or an in-progress record whose lease ran out), else the record's
 * answer as `begin` gives it (`completed` / `failed` replay, `conflict`, `in_flight` for a live lease).
 */
export type LookupOutcome = { state: 'absent' } | BeginCompleted | BeginFailed | BeginConflict | BeginInFlight;

/**
 * What {@link IdempotencyStore.insertIfAbsent} did: `inserted` when this call's result is now the record;
 * otherwise it wrote nothing and says what is stored, as {@link LookupOutcome} does.
 */
export type InsertOutcome = { state: 'inserted' } | BeginCompleted | BeginFailed | BeginConflict | BeginInFlight;

/**
 * A durable store of idempotency keys, after Stripe, the IETF Idempotency-Key draft and AWS Powertools.
 *
 * A record is in progress (owned by a token under a lease), completed (with a JSON result) or failed (with a
 * permanent {@link StoredFailure}). Records are kept at least `retentionMs` (24 h by default) after they
 * finished or after their last lease ran out (a finished record may name its own retention, see
 * {@link FinishOptions}); past that they are treated as absent and `reap` deletes them.
 *
 * Fencing: every `begin` that hands out ownership creates a new random token. Writes name the token and
 * succeed only while it is the current token of an in-progress record. A holder whose lease ran out keeps
 * ownership until someone else actually takes the key over; after that its `heartbeat` returns false and its
 * `complete` / `fail` throw `LEASE_LOST`, so a late writer can never overwrite the new owner's outcome.
 *
 * All timestamps are milliseconds since the epoch, from the store's clock.
 *
 * @example
 * ```ts
 * const outcome = await store.begin(key, fingerprint(args), { owner: 'worker-1', leaseMs: 30_000 });
 * if (outcome.state === 'started') {
 *   const result = await callTool(args);
 *   await store.complete(key, outcome.token, result);
 * }
 * ```
 */
export interface IdempotencyStore {
  /**
   * Claims `key` for a call whose arguments have `fingerprint`, atomically: of any number of concurrent
   * begins of one new key exactly one gets `started`. Decision order: a record past retention counts as
   * absent; otherwise a different fingerprint gives `conflict`; then `completed` / `failed` replay; then an
   * in-progress record gives `in_flight` while its lease is live and `outcome_unknown` (a takeover) after.
   *
   * @throws {@link IdempotencyStoreError} `INVALID_KEY`, `INVALID_ARGUMENT`, `STORE_UNAVAILABLE`, `STORE_CLOSED`.
   */
  begin(key: string, fingerprint: string, options: BeginOptions): Promise<BeginOutcome>;

  /**
   * `begin`, except that an in-progress record whose owner is still `options.deadOwner` is taken over at once
   * (`outcome_unknown` with `previousHolderDead: true`), without waiting for its lease and takeover grace. The
   * caller must have proved that holder's process dead (it can send nothing more). Fenced like every takeover:
   * a compare-and-set on the record's current token and owner, so of any number of concurrent takers exactly
   * one wins and the others get `in_flight` for the winner; a record held by anyone else (the winner, a new
   * owner) is decided exactly as `begin` decides it. Optional: a store without it keeps the lease + grace path.
   *
   * @throws {@link IdempotencyStoreError} as `begin`.
   */
  takeOverDeadHolder?(key: string, fingerprint: string, options: TakeOverOptions): Promise<BeginOutcome>;

  /**
   * Extends the lease of `token` to now + `leaseMs` (default 30 s). Returns false, changing nothing, when the
   * token no longer owns an in-progress record (taken over, released, finished, reaped): stop working then.
   */
  heartbeat(key: string, token: string, leaseMs?: number): Promise<boolean>;

  /**
   * Stores the result (JSON, or `undefined`) and ends the lease; later begins replay it. Repeating it with the
   * same token after success is a no-op (the first result stays).
   *
   * `options.retentionMs` keeps this record that long instead of the store's retention.
   *
   * @throws {@link IdempotencyStoreError} `LEASE_LOST` when the token no longer owns the key; `NOT_JSON`;
   * `INVALID_ARGUMENT` for a bad `options.retentionMs`.
   */
  complete(key: string, token: string, result: unknown, options?: FinishOptions): Promise<void>;

  /**
   * Stores a PERMANENT failure and ends the lease; later begins replay it. Repeating it with the same token
   * after success is a no-op.
   *
   * `options.retentionMs` keeps this record that long instead of the store's retention.
   *
   * @throws {@link IdempotencyStoreError} `LEASE_LOST` when the token no longer owns the key; `NOT_JSON`;
   * `INVALID_ARGUMENT` for a bad `options.retentionMs`.
   */
  fail(key: string, token: string, error: StoredFailure, options?: FinishOptions): Promise<void>;

  /**
   * After a TRANSIENT failure: forgets the in-progress record so that the next begin starts fresh. Returns
   * false, deleting nothing, when the token no longer owns the key (it never throws `LEASE_LOST`, so it cannot
   * mask the failure being handled).
   */
  release(key: string, token: string): Promise<boolean>;

  /**
   * Reads what is stored under `key`, writing nothing: what {@link IdempotencyStore.insertIfAbsent} would
   * find now. With `insertIfAbsent`, it records a value computed without side effects (a model turn) in one
   * commit: look up, compute when `absent`, insert; a store without them is used through `begin` + `complete`.
   *
   * @throws {@link IdempotencyStoreError} `INVALID_KEY`, `INVALID_ARGUMENT`, `STORE_UNAVAILABLE`, `STORE_CLOSED`.
   */
  lookup?(key: string, fingerprint: string): Promise<LookupOutcome>;

  /**
   * Stores `result` as the completed record of `key` unless one is there: first writer wins, in one atomic
   * write. Of any number of concurrent inserts of one key exactly one gets `inserted`; every other one writes
   * nothing and gets the winner's `completed` result (so all of them return the same value). An in-progress
   * record whose lease ran out counts as absent (its holder's token is fenced off: its `complete` then throws
   * `LEASE_LOST`); one with a live lease gives `in_flight`; another fingerprint gives `conflict`.
   *
   * Meant for a result that is safe to compute twice (no effect), such as a model turn: a tool call with
   * effects claims its key with `begin` first, so its effect runs once.
   *
   * @throws {@link IdempotencyStoreError} `NOT_JSON`; `INVALID_KEY`, `INVALID_ARGUMENT` (also for a bad
   * `options.retentionMs`), `STORE_UNAVAILABLE`, `STORE_CLOSED`.
   */
  insertIfAbsent?(key: string, fingerprint: string, result: unknown, options?: FinishOptions): Promise<InsertOutcome>;

  /** Deletes records past retention at `now` (default: the store's clock) and returns how many. */
  reap(now?: number): Promise<number>;

  /** Releases connections and file handles. Further calls throw `STORE_CLOSED`. Idempotent. */
  close(): Promise<void>;
}
