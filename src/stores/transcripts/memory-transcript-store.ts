import type { TranscriptMessage } from '../../contract/model-types';
import type { StoredPayload, TranscriptStore } from './transcript-store';
import { TranscriptStoreError } from './transcript-store-error';
import { expiryOf, payloadRetention, type PayloadRetention, type PayloadRetentionOptions } from './payload-retention';

/** Options of {@link MemoryTranscriptStore}. */
export interface MemoryTranscriptStoreOptions extends PayloadRetentionOptions {
  /**
   * The most transcript text this store keeps, as the length of the messages' JSON (default 128 Mi, about as
   * many bytes of ASCII text; `Infinity`: no bound). Past it the transcripts of the runs used least recently are
   * dropped, never the one just written: a run whose transcript was dropped gets it sent again by its workflow
   * at its next model turn, as after a worker restart. So the store's memory stays bounded however many runs
   * the worker has served (a transcript is otherwise kept until `delete`).
   */
  maxTranscriptBytes?: number;
}

/** The default bound of a {@link MemoryTranscriptStore}: 128 MiB of transcript JSON. */
const DEFAULT_MAX_TRANSCRIPT_BYTES = 128 * 1024 * 1024;

/** A run's transcript and what each of its messages weighs (the length of its JSON). */
interface StoredTranscript {
  messages: TranscriptMessage[];
  sizes: number[];
  bytes: number;
}

/**
 * A transcript store in this process's memory: the default of a single worker process. A worker that
 * restarts loses it, and the workflow then resends the transcript it holds (see the model activity); so does a
 * run whose transcript was dropped to keep the store within `maxTranscriptBytes`, least recently used first.
 * Stored payloads (claim checks of large tool outputs) live only here too: with several workers, a
 * `read_stored_output` call or a compensation that lands on another worker does not find them — use the
 * SQLite store (one machine) or Postgres (several) there.
 */
export class MemoryTranscriptStore implements TranscriptStore {
  /** Least recently used first (a Map keeps insertion order; a use moves a run to the end). */
  private readonly runs = new Map<string, StoredTranscript>();
  private readonly payloads = new Map<string, Required<StoredPayload>>();
  private readonly retention: PayloadRetention;
  private readonly maxBytes: number;
  private bytes = 0;

  /**
   * @throws {@link TranscriptStoreError} `INVALID_CONFIG` for a retention or a `maxTranscriptBytes` that is not a
   * positive number.
   */
  constructor(options: MemoryTranscriptStoreOptions = {}) {
    this.retention = payloadRetention(options);
    const maxBytes = options.maxTranscriptBytes ?? DEFAULT_MAX_TRANSCRIPT_BYTES;
    if (typeof maxBytes !== 'number' || !(maxBytes > 0)) {
      throw new TranscriptStoreError(
        `maxTranscriptBytes must be a positive number of bytes (got ${String(maxBytes)}); leave it out for the default (128 MiB).`,
        'INVALID_CONFIG',
      );
    }
    this.maxBytes = maxBytes;
  }

  async write(runKey: string, fromIndex: number, messages: readonly TranscriptMessage[]): Promise<boolean> {
    const stored = this.runs.get(runKey);
    const length = stored?.messages.length ?? 0;
    if (length < fromIndex) return false;
    const added = structuredClone(messages) as TranscriptMessage[];
    const addedSizes = added.map(jsonLength);
    const keptSizes = stored ? stored.sizes.slice(0, fromIndex) : [];
    const next: StoredTranscript = {
      messages: [...(stored ? stored.messages.slice(0, fromIndex) : []), ...added],
      sizes: [...keptSizes, ...addedSizes],
      bytes: sum(keptSizes) + sum(addedSizes),
    };
    this.forget(runKey);
    // Like the SQL stores, an empty transcript is no transcript.
    if (next.messages.length === 0) return true;
    this.runs.set(runKey, next);
    this.bytes += next.bytes;
    this.dropLeastRecentlyUsed(runKey);
    return true;
  }

  async read(runKey: string): Promise<TranscriptMessage[] | undefined> {
    const stored = this.runs.get(runKey);
    if (!stored) return undefined;
    // Used now: the last to be dropped.
    this.runs.delete(runKey);
    this.runs.set(runKey, stored);
    return structuredClone(stored.messages);
  }

  async putPayload(handle: string, payload: StoredPayload): Promise<void> {
    const expiresAt = expiryOf(payload, this.retention);
    this.payloads.set(handle, { runId: payload.runId, text: payload.text, expiresAt });
  }

  async getPayload(handle: string): Promise<StoredPayload | undefined> {
    const stored = this.payloads.get(handle);
    return stored && stored.expiresAt > this.retention.clock() ? { ...stored } : undefined;
  }

  async reapPayloads(now: number = this.retention.clock()): Promise<number> {
    let count = 0;
    for (const [handle, payload] of this.payloads) {
      if (payload.expiresAt <= now) {
        this.payloads.delete(handle);
        count += 1;
      }
    }
    return count;
  }

  async delete(runKey: string): Promise<void> {
    this.forget(runKey);
  }

  async close(): Promise<void> {
    this.runs.clear();
    this.bytes = 0;
    this.payloads.clear();
  }

  /** Removes a run's transcript and its weight. */
  private forget(runKey: string): void {
    const stored = this.runs.get(runKey);
    if (!stored) return;
    this.runs.delete(runKey);
    this.bytes -= stored.bytes;
  }

  /** Drops the transcripts used least recently until the store is within its bound, never `kept`'s. */
  private dropLeastRecentlyUsed(kept: string): void {
    for (const runKey of this.runs.keys()) {
      if (this.bytes <= this.maxBytes) return;
      if (runKey !== kept) this.forget(runKey);
    }
  }
}

/** The length of a message's JSON text (its weight against `maxTranscriptBytes`). */
function jsonLength(message: TranscriptMessage): number {
  return JSON.stringify(message)?.length ?? 0;
}

function sum(values: readonly number[]): number {
  let total = 0;
  for (const value of values) total += value;
  return total;
}
