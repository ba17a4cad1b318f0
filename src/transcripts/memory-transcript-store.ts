import type { TranscriptMessage } from '../model/model-types';
import type { TranscriptStore } from './transcript-store';

/**
 * A transcript store in this process's memory: the default of a single worker process. A worker that
 * restarts loses it, and the workflow then resends the transcript it holds (see the model activity).
 */
export class MemoryTranscriptStore implements TranscriptStore {
  private readonly runs = new Map<string, TranscriptMessage[]>();

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

  async delete(runKey: string): Promise<void> {
    this.runs.delete(runKey);
  }

  async close(): Promise<void> {
    this.runs.clear();
  }
}
