import type { TranscriptMessage } from '../model/model-types';
import type { StoredPayload, TranscriptStore } from './transcript-store';

/**
 * A transcript store in this process's memory: the default of a single worker process. A worker that
 * restarts loses it, and the workflow then resends the transcript it holds (see the model activity).
 * Stored payloads (claim checks of large tool outputs) live only here too: with several workers, a
 * `read_stored_output` call or a compensation that lands on another worker does not find them — use the
 * SQLite store (one machine) or Postgres (several) there.
 */
export class MemoryTranscriptStore implements TranscriptStore {
  private readonly runs = new Map<string, TranscriptMessage[]>();
  private readonly payloads = new Map<string, StoredPayload>();

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
    this.payloads.set(handle, { runId: payload.runId, text: payload.text });
  }

  async getPayload(handle: string): Promise<StoredPayload | undefined> {
    const stored = this.payloads.get(handle);
    return stored ? { ...stored } : undefined;
  }

  async delete(runKey: string): Promise<void> {
    this.runs.delete(runKey);
  }

  async close(): Promise<void> {
    this.runs.clear();
    this.payloads.clear();
  }
}
