import type { AgentStreamEvent, AgentStreamEventData } from './stream-events';

/**
 * Where the live events of runs go, out of band: the worker appends, readers in any process read from an
 * offset and wait for more. Keyed by stream (a run's key, `${workflowId}/${firstExecutionRunId}`, stable across
 * continue-as-new). Bounded: each store keeps a number of events per run and an age (see
 * `StreamRetentionOptions`); nothing here is durable history, which stays in Temporal.
 */
export interface StreamStore {
  /**
   * Appends events to a stream in order and returns the offset of the last one. Offsets of a stream are
   * 1, 2, 3, … without gaps, whoever writes them (several workers may append to one stream).
   */
  append(stream: string, events: readonly AgentStreamEventData[]): Promise<number>;
  /** The offset of the stream's last event (0 for a stream nothing was appended to), kept or already expired. */
  head(stream: string): Promise<number>;
  /** Events of the stream with offset ≥ `from`, oldest first, at most `limit` (default 1000). */
  read(stream: string, from: number, limit?: number): Promise<AgentStreamEvent[]>;
  /**
   * Resolves once the stream may hold an event at offset ≥ `from` (it may already), or when `signal` aborts or
   * `timeoutMs` passes; never rejects for those. Readers call `read` after it.
   */
  waitFor(stream: string, from: number, options?: { signal?: AbortSignal; timeoutMs?: number }): Promise<void>;
  /** Deletes the events older than the retention and returns how many (stores also sweep on their own). */
  sweep(now?: number): Promise<number>;
  close(): Promise<void>;
}
