import type { TranscriptMessage } from '../../contract/model-types';

/**
 * A payload kept out of Temporal's history (a claim check): a tool output above its budget, or the
 * arguments of a compensable call, as JSON text, with the run it belongs to.
 */
export interface StoredPayload {
  /**
   * The run that produced it (`${workflowId}/${firstExecutionRunId}`, the tool context's `runKey`; payloads of
   * runs started before run-scoped keys: the workflow id): only that run may read it.
   */
  runId: string;
  /** The payload's JSON text. */
  text: string;
  /**
   * When the payload expires, in epoch ms by the store's clock: past it the payload reads as absent and
   * `reapPayloads` deletes it. Omitted on `putPayload`: now plus the store's `payloadRetentionMs` (default
   * 7 days). A caller that keeps results for a declared time (a long call's result) sets it per entry;
   * storing the handle again with a later `expiresAt` extends it.
   */
  expiresAt?: number;
}

/**
 * Where a run's transcript lives, so the workflow sends the model activity only what is new each turn
 * and its history grows by a constant amount per step. Keyed by run (workflow id and first run id).
 *
 * Writes are positional and idempotent: writing messages at `fromIndex` replaces whatever is stored from
 * there on, so a retried model call writes the same messages again without duplicating them.
 */
export interface TranscriptStore {
  /**
   * Stores `messages` at positions `fromIndex`... and drops anything after them. Returns false, writing
   * nothing, when the store holds fewer than `fromIndex` messages for the run (it lacks the prefix).
   */
  write(runKey: string, fromIndex: number, messages: readonly TranscriptMessage[]): Promise<boolean>;
  /** The whole transcript of the run, or undefined when the store has none. */
  read(runKey: string): Promise<TranscriptMessage[] | undefined>;
  /**
   * Stores a payload under `handle` (idempotent: storing it again replaces it). Handles are derived from
   * idempotency keys, so a retried call writes the same handle.
   */
  putPayload(handle: string, payload: StoredPayload): Promise<void>;
  /** The payload stored under `handle` (with its `expiresAt`), or undefined when there is none or it expired. */
  getPayload(handle: string): Promise<StoredPayload | undefined>;
  /**
   * Deletes the payloads whose expiry is at or before `now` (default: the store's clock) and returns how many.
   * See `createPayloadReaper` for running it periodically.
   */
  reapPayloads(now?: number): Promise<number>;
  /** Forgets a run's transcript. */
  delete(runKey: string): Promise<void>;
  close(): Promise<void>;
}
