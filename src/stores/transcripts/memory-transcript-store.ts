import type { TranscriptMessage } from '../../contract/model-types';
import type { StoredPayload, TranscriptStore } from './transcript-store';
import { expiryOf, payloadRetention, type PayloadRetention, type PayloadRetentionOptions } from './payload-retention';

/**
 * A transcript store in this process's memory: the default of a single worker process. A worker that
 * restarts loses it, and the workflow then resends the transcript it holds (see the model activity).
 * Stored payloads (claim checks of large tool outputs) live only here too: with several workers, a
 * `read_stored_output` call or a compensation that lands on another worker does not find them — use the
 * SQLite store (one machine) or Postgres (several) there.
 */
export class MemoryTranscriptStore implements TranscriptStore {
  private readonly runs = new Map<string, TranscriptMessage[]>();
  private readonly payloads = new Map<string, Required<StoredPayload>>();
  private readonly retention: PayloadRetention;

  /** @throws {@link TranscriptStoreError} `INVALID_CONFIG` for a retention that is not a positive number. */
  constructor(options: PayloadRetentionOptions = {}) {
    this.retention = payloadRetention(options);
  }

  async write(runKey: string, fromIndex: number, messages: readonly TranscriptMessage[]): Promise<boolean> {
    const stored = this.runs.get(runKey) ?? [];
    if (stored.length < fromIndex) return false;
    const next = [...stored.slice(0, fromIndex), ...structuredClone(messages)];
    // Like the SQL stores, an empty transcript is no transcript.
    if (next.length === 0) this.runs.delete(runKey);
    else this.runs.set(runKey, next);
    return true;
  }

  async read(runKey: string): Promise<TranscriptMessage[] | undefined> {
    const stored = this.runs.get(runKey);
    return stored ? structuredClone(stored) : undefined;
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
    this.runs.delete(runKey);
  }

  async close(): Promise<void> {
    this.runs.clear();
    this.payloads.clear();
  }
}
