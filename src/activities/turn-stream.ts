/**
 * The live stream of one model-turn attempt: a segment of the run's stream (see docs/streaming.md). The
 * provider's deltas are queued and appended to the stream store out of band, batched while an append is in
 * flight, so a slow store never slows the turn and Temporal's history never sees a token. Publishing is best
 * effort: a store that fails is logged once and the turn goes on; the durable result is the returned turn.
 */
import type { ModelStreamSink, ModelTurn } from '../contract/model-types';
import type { AgentStreamEventData, StreamSegment } from '../stores/streams/stream-events';
import type { StreamStore } from '../stores/streams/stream-store';
import { STREAM_RETENTION } from '../stores/streams/stream-retention';

/** How long the end of a turn waits for its events to reach the store before the activity returns anyway. */
export const TURN_STREAM_FLUSH_MS = 5_000;

/** A segment being written. */
export interface TurnStream extends ModelStreamSink {
  /** Ends the segment with the turn the activity returns; streams it whole if the provider did not stream. */
  complete(turn: ModelTurn): Promise<void>;
  /** Ends the segment as failed (another attempt may follow as a new segment). */
  fail(code: string): Promise<void>;
}

interface Logger {
  warn(message: string, meta?: Record<string, unknown>): void;
}

/** How many of a stream's last events a local turn's segment reads for an earlier attempt's segment. */
export const EARLIER_SEGMENT_LOOKBACK = 1_000;

/**
 * Opens the segment of one attempt: writes its `segment-start` marker (a restart marker from attempt 2 on). A
 * local turn (`local`: the fast path) counts its attempts from 1 again when its workflow task is retried (its
 * worker died mid-turn): its segment then follows the earlier one it finds in the stream, as the next attempt,
 * marked as a restart.
 */
export function openTurnStream(
  store: StreamStore,
  stream: string,
  segment: StreamSegment,
  log?: Logger,
  options: { local?: boolean } = {},
): TurnStream {
  const queue: AgentStreamEventData[] = [];
  const start = { type: 'segment-start' as const, segment, restart: segment.attempt > 1 };
  const ready = options.local ? followEarlierSegment(store, stream, start) : undefined;
  let pumping: Promise<void> | undefined;
  let broken = false;
  let streamed = false;

  const push = (event: AgentStreamEventData): void => {
    if (broken) return;
    const last = queue[queue.length - 1];
    if (
      event.type === 'text-delta' &&
      last?.type === 'text-delta' &&
      last.delta.length + event.delta.length <= STREAM_RETENTION.maxEventTextChars
    ) {
      last.delta += event.delta; // coalesce while the previous append is in flight
    } else {
      queue.push(event.type === 'text-delta' ? { ...event } : event);
    }
    pumping ??= pump();
  };
  const pump = async (): Promise<void> => {
    if (ready) await ready;
    while (queue.length > 0 && !broken) {
      const batch = queue.splice(0, queue.length);
      try {
        await store.append(stream, batch);
      } catch (error) {
        broken = true;
        queue.length = 0;
        log?.warn('The live stream of this model turn stopped: the stream store failed.', {
          stream,
          error: (error as Error)?.message,
        });
      }
    }
    pumping = undefined;
  };
  const flush = async (): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, TURN_STREAM_FLUSH_MS);
      timer.unref?.();
    });
    await Promise.race([
      (async () => {
        while (pumping) await pumping;
      })(),
      late,
    ]);
    clearTimeout(timer);
  };
  const text = (delta: string): void => {
    if (typeof delta !== 'string' || delta === '') return;
    streamed = true;
    for (let i = 0; i < delta.length; i += STREAM_RETENTION.maxEventTextChars) {
      push({ type: 'text-delta', segment, delta: delta.slice(i, i + STREAM_RETENTION.maxEventTextChars) });
    }
  };
  const toolCallStart = (call: { id: string; name: string }): void => {
    streamed = true;
    push({ type: 'tool-call-start', segment, toolCallId: String(call.id), toolName: String(call.name) });
  };

  push(start);
  return {
    text,
    toolCallStart,
    async complete(turn) {
      if (!streamed) {
        // A provider that does not stream: the whole turn, as one piece.
        if (turn.text) text(turn.text);
        for (const call of turn.toolCalls) toolCallStart(call);
      }
      push({
        type: 'segment-end',
        segment,
        outcome: 'completed',
        ...(turn.finishReason ? { finishReason: turn.finishReason } : {}),
      });
      await flush();
    },
    async fail(code) {
      push({ type: 'segment-end', segment, outcome: 'failed', error: code });
      await flush();
    },
  };
}

/**
 * Makes `start`'s segment the next attempt of the latest segment of the same turn and run among the stream's last
 * {@link EARLIER_SEGMENT_LOOKBACK} events, marked as a restart; nothing when there is none. Best effort: a store
 * that fails leaves the segment as it is.
 */
async function followEarlierSegment(
  store: StreamStore,
  stream: string,
  start: { segment: StreamSegment; restart: boolean },
): Promise<void> {
  try {
    const head = await store.head(stream);
    if (head < 1) return;
    const from = Math.max(1, head - EARLIER_SEGMENT_LOOKBACK + 1);
    const { segment } = start;
    let earlier = 0;
    for (const event of await store.read(stream, from, EARLIER_SEGMENT_LOOKBACK)) {
      if (event.type !== 'segment-start' || event.segment.runId !== segment.runId) continue;
      if (event.segment.turn === segment.turn) earlier = Math.max(earlier, event.segment.attempt);
    }
    if (earlier === 0) return;
    segment.attempt = Math.max(segment.attempt, earlier + 1);
    start.restart = true;
  } catch {
    // The segment keeps its attempt: a reader still shows the turn's latest segment (streamTurnTexts).
  }
}
