import type { AgentStreamEvent, AgentStreamEventData } from './stream-events';
import type { StreamStore } from './stream-store';
import { streamRetention, type StreamRetention, type StreamRetentionOptions } from './stream-retention';
import { StreamStoreError } from './stream-store-error';
import { sleepOrAbort } from './stream-wait';

interface MemoryStream {
  last: number;
  events: AgentStreamEvent[];
  waiters: Set<() => void>;
}

/**
 * A stream store in this process's memory (an in-process bus): readers are woken at once, but only readers of
 * the same process see it, and a restart loses it. For tests and single-process apps (a worker and its client
 * in one process); workers and clients in separate processes need the SQLite or Postgres store.
 */
export class MemoryStreamStore implements StreamStore {
  private readonly streams = new Map<string, MemoryStream>();
  private readonly retention: StreamRetention;
  private closed = false;

  /** @throws {@link StreamStoreError} `INVALID_CONFIG` for a bound that is not a positive number. */
  constructor(options: StreamRetentionOptions = {}) {
    this.retention = streamRetention(options);
  }

  async append(stream: string, events: readonly AgentStreamEventData[]): Promise<number> {
    this.assertOpen();
    const entry = this.streamOf(stream);
    const at = this.retention.clock();
    for (const event of events) {
      entry.last += 1;
      entry.events.push({ ...event, offset: entry.last, at } as AgentStreamEvent);
    }
    const excess = entry.events.length - this.retention.maxEventsPerRun;
    if (excess > 0) entry.events.splice(0, excess);
    for (const wake of [...entry.waiters]) wake();
    return entry.last;
  }

  async head(stream: string): Promise<number> {
    return this.streams.get(stream)?.last ?? 0;
  }

  async read(stream: string, from: number, limit = 1000): Promise<AgentStreamEvent[]> {
    this.assertOpen();
    const cutoff = this.retention.clock() - this.retention.retentionMs;
    const events = this.streams.get(stream)?.events ?? [];
    return events.filter((event) => event.offset >= from && event.at > cutoff).slice(0, limit);
  }

  async waitFor(
    stream: string,
    from: number,
    options: { signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<void> {
    const entry = this.streamOf(stream);
    if (this.closed || entry.last >= from) return;
    let wake: () => void = () => {};
    const woken = new Promise<void>((resolve) => {
      wake = resolve;
      entry.waiters.add(resolve);
    });
    const done = new AbortController(); // ends the timer when woken first
    const signal = options.signal ? AbortSignal.any([options.signal, done.signal]) : done.signal;
    try {
      await Promise.race([woken, sleepOrAbort(options.timeoutMs ?? 60_000, signal)]);
    } finally {
      done.abort();
      entry.waiters.delete(wake);
    }
  }

  async sweep(now: number = this.retention.clock()): Promise<number> {
    const cutoff = now - this.retention.retentionMs;
    let removed = 0;
    for (const entry of this.streams.values()) {
      const kept = entry.events.filter((event) => event.at > cutoff);
      removed += entry.events.length - kept.length;
      entry.events = kept;
    }
    return removed;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const entry of this.streams.values()) for (const wake of entry.waiters) wake();
  }

  private streamOf(stream: string): MemoryStream {
    let entry = this.streams.get(stream);
    if (!entry) {
      entry = { last: 0, events: [], waiters: new Set() };
      this.streams.set(stream, entry);
    }
    return entry;
  }

  private assertOpen(): void {
    if (this.closed) throw new StreamStoreError('The stream store is closed.', 'STORE_CLOSED');
  }
}
