import type { Client } from '@temporalio/client';
import type { AgentStreamEvent } from '../stores/streams/stream-events';
import type { StreamStore } from '../stores/streams/stream-store';

/** Options of {@link streamAgentRun}. */
export interface StreamAgentRunOptions {
  /** The stream store the run's workers publish to (see `openStreamStore`). */
  store: StreamStore;
  /**
   * The offset of the first event to deliver (default 1: the whole stream still kept). To resume after a
   * disconnect, pass the last offset seen plus one: nothing is delivered twice and nothing is skipped.
   */
  from?: number;
  /** Stops the iteration (it then ends without an error). */
  signal?: AbortSignal;
  /** How often the run's status is checked while no event arrives, in ms (default 1000). */
  statusEveryMs?: number;
}

/** Events read per store round trip. */
const READ_BATCH = 500;

/**
 * The live events of an agent run, oldest first, as an async iterator: text deltas and tool-call starts of its
 * model turns (in segments, one per attempt of a turn: a `segment-start` with `restart: true` replaces the
 * text of that turn's earlier segment), and progress of its running tool calls. It follows the run across
 * continue-as-new and ends once the run has ended and every event it published was delivered; `break` or
 * `signal` ends it earlier. Events older than the store's retention are gone: the first event delivered
 * may then have an offset above `from`.
 *
 * @example
 * ```ts
 * const store = await openStreamStore({ kind: 'sqlite' });
 * let last = 0;
 * for await (const event of streamAgentRun(client, 'trip-42', { store, from: last + 1 })) {
 *   if (event.type === 'text-delta') process.stdout.write(event.delta);
 *   last = event.offset;
 * }
 * ```
 */
export async function* streamAgentRun(
  client: Client,
  workflowId: string,
  options: StreamAgentRunOptions,
): AsyncGenerator<AgentStreamEvent, void, undefined> {
  const { store, signal } = options;
  const statusEveryMs = options.statusEveryMs ?? 1000;
  const firstRunId = await firstRunIdOf(client, workflowId);
  const stream = `${workflowId}/${firstRunId}`;
  let next = Math.max(1, Math.floor(options.from ?? 1));
  let ended = false;
  while (!signal?.aborted) {
    const events = await store.read(stream, next, READ_BATCH);
    for (const event of events) {
      if (signal?.aborted) return;
      yield event;
      next = event.offset + 1;
    }
    if (events.length > 0) continue;
    // Every event is appended before the activity that wrote it returns, so once the run has ended, one more
    // read after seeing it has delivered everything.
    if (ended) return;
    const head = await store.head(stream);
    if (head >= next) {
      // Appended since the read, or expired before it: only in the second case is there nothing to read now.
      if ((await store.read(stream, next, 1)).length === 0) next = head + 1;
      continue;
    }
    await store.waitFor(stream, next, { timeoutMs: statusEveryMs, ...(signal ? { signal } : {}) });
    if ((await store.head(stream)) < next) ended = await runEnded(client, workflowId, firstRunId);
  }
}

/** The first run id of the chain the workflow id names now (the stream's key with the workflow id). */
async function firstRunIdOf(client: Client, workflowId: string): Promise<string> {
  const description = await client.workflow.getHandle(workflowId).describe();
  return description.raw.workflowExecutionInfo?.firstRunId || description.runId;
}

/** Whether the run chain that began with `firstRunId` has ended (closed, or the id now names a newer run). */
async function runEnded(client: Client, workflowId: string, firstRunId: string): Promise<boolean> {
  const description = await client.workflow.getHandle(workflowId).describe();
  const latestFirst = description.raw.workflowExecutionInfo?.firstRunId || description.runId;
  return latestFirst !== firstRunId || description.status.name !== 'RUNNING';
}
