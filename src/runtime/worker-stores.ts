import type { AuditStore } from '../stores/audit/audit-store';
import { createAuditStore } from '../stores/audit/create-audit-store';
import { MemoryAuditStore } from '../stores/audit/memory-audit-store';
import { createIdempotencyStore } from '../stores/idempotency/create-idempotency-store';
import { createIdempotencyReaper } from '../stores/idempotency/idempotency-reaper';
import type { IdempotencyStore } from '../stores/idempotency/idempotency-store';
import { MemoryIdempotencyStore } from '../stores/idempotency/memory-idempotency-store';
import { createTranscriptStore } from '../stores/transcripts/create-transcript-store';
import { MemoryTranscriptStore } from '../stores/transcripts/memory-transcript-store';
import { createPayloadReaper } from '../stores/transcripts/payload-reaper';
import type { TranscriptStore } from '../stores/transcripts/transcript-store';
import { createToolLimitStore } from '../stores/limits/create-tool-limit-store';
import { MemoryToolLimitStore } from '../stores/limits/memory-tool-limit-store';
import type { ToolLimitStore } from '../stores/limits/tool-limit-store';

/**
 * Where a worker's stores come from when they are not given one by one: `'durable'` (the default) opens the
 * stores the environment configures, as `createIdempotencyStore()`, `createTranscriptStore()` and
 * `createAuditStore()` do — SQLite files in `.data/` unless `DURABLE_TOOLS_IDEMPOTENCY_STORE`,
 * `DURABLE_TOOLS_TRANSCRIPT_STORE` and `DURABLE_TOOLS_AUDIT_STORE` (and their paths and URLs) say otherwise;
 * `'memory'` keeps everything in this process (tests: keys are lost with the process, so a retried attempt after
 * a crash may run a tool again).
 */
export type WorkerStoresKind = 'durable' | 'memory';

/** The stores a worker is given, one by one; each one missing comes from {@link WorkerStoresKind}. */
export interface WorkerStoreOptions {
  /** Default of the stores not given below (default `'durable'`). */
  stores?: WorkerStoresKind;
  /** Idempotency keys of calls with effects (and the fast path's recorded model turns). The caller closes it. */
  idempotencyStore?: IdempotencyStore;
  /** Transcripts and claim checks (tool outputs above their budget). The caller closes it. */
  transcripts?: TranscriptStore;
  /** The audit trail of gated calls (approval decisions). The caller closes it. */
  auditStore?: AuditStore;
  /**
   * Slots, rate windows and breakers of tools with limits (docs/limits.md); every worker of the task queue must share
   * it. Default: `createToolLimitStore()` (the idempotency keys' SQLite file or Postgres database). The caller closes it.
   */
  limitStore?: ToolLimitStore;
}

/** A worker's stores, and the closing of those it opened itself. */
export interface WorkerStores {
  idempotencyStore: IdempotencyStore;
  transcripts: TranscriptStore;
  auditStore: AuditStore;
  limitStore: ToolLimitStore;
  /** Whether keys live in this process's memory only. */
  keysInMemory: boolean;
  /** Stops the reapers of the stores opened here and closes those stores (given ones stay open). */
  close(): Promise<void>;
}

/**
 * Opens the stores a worker lacks: the given ones are used as they are, the others are durable (with their
 * reapers of expired keys and payloads) or in memory as `stores` says. Closing closes only what was opened here.
 */
export function openWorkerStores(options: WorkerStoreOptions): WorkerStores {
  const memory = options.stores === 'memory';
  if (options.stores !== undefined && options.stores !== 'durable' && !memory) {
    throw new TypeError(`stores must be 'durable' or 'memory', not ${JSON.stringify(options.stores)}.`);
  }
  const owned: Array<{ close(): Promise<void> }> = [];
  const reapers: Array<{ stop(): void }> = [];
  const own = <S extends { close(): Promise<void> }>(store: S): S => (owned.push(store), store);
  try {
    const idempotencyStore =
      options.idempotencyStore ?? own(memory ? new MemoryIdempotencyStore() : createIdempotencyStore());
    const transcripts = options.transcripts ?? own(memory ? new MemoryTranscriptStore() : createTranscriptStore());
    const auditStore = options.auditStore ?? own(memory ? new MemoryAuditStore() : createAuditStore());
    const limitStore = options.limitStore ?? own(memory ? new MemoryToolLimitStore() : createToolLimitStore());
    if (!memory && !options.idempotencyStore) reapers.push(createIdempotencyReaper(idempotencyStore));
    if (!memory && !options.transcripts) reapers.push(createPayloadReaper(transcripts));
    return {
      idempotencyStore,
      transcripts,
      auditStore,
      limitStore,
      keysInMemory: idempotencyStore instanceof MemoryIdempotencyStore,
      close: () => closeAll(reapers, owned),
    };
  } catch (error) {
    void closeAll(reapers, owned);
    throw error;
  }
}

async function closeAll(reapers: Array<{ stop(): void }>, stores: Array<{ close(): Promise<void> }>): Promise<void> {
  for (const reaper of reapers.splice(0)) reaper.stop();
  const results = await Promise.allSettled(stores.splice(0).map((store) => store.close()));
  const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) throw failed.reason;
}
