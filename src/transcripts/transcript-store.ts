import type { TranscriptMessage } from '../model/model-types';

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
  /** Forgets a run's transcript. */
  delete(runKey: string): Promise<void>;
  close(): Promise<void>;
}
