import { temporal } from '@temporalio/proto';
import { DeterminismViolationError } from '@temporalio/workflow';

/** The history event a replay stopped at: its id and its type (`ActivityTaskScheduled`, `TimerStarted`, ...). */
export interface ReplayEvent {
  eventId: number;
  eventType: string;
}

/** What the replay of one history found, before it is tied to its workflow. */
export interface ReplayOutcome {
  outcome: 'ok' | 'nondeterministic' | 'failed';
  /** The first event the current code disagrees with, when the replayer names one. */
  event?: ReplayEvent;
  /** The replayer's message, without the SDK's wrapping. */
  message?: string;
}

/**
 * Reads the replayer's verdict on one history: none is `ok`, a `DeterminismViolationError` is
 * `nondeterministic` (with the event Temporal's core names in its message, its type read from the history),
 * anything else (the workflow failed to start or threw during replay) `failed`.
 */
export function replayOutcome(error: Error | undefined, history: temporal.api.history.v1.IHistory): ReplayOutcome {
  if (!error) return { outcome: 'ok' };
  const message = innerMessage(error.message);
  if (!(error instanceof DeterminismViolationError)) return { outcome: 'failed', message };
  const event = namedEvent(message, history);
  return { outcome: 'nondeterministic', message, ...(event ? { event } : {}) };
}

/**
 * The message of the core's failure inside the SDK's wrapping (`... Details: Workflow activation completion
 * failed: Failure { failure: Some(Failure { message: "…", ...`), or the whole message when it has no such part.
 */
function innerMessage(message: string): string {
  const inner = /message: "((?:[^"\\]|\\.)*)"/.exec(message)?.[1];
  return inner === undefined ? message : inner.replace(/\\(.)/g, '$1');
}

/**
 * The event a nondeterminism message names: by id (`HistoryEvent(id: 5, UpsertWorkflowSearchAttributes)`), or,
 * for a recorded patch the code no longer has (`patch marker encountered for change <id>`), its marker.
 */
function namedEvent(message: string, history: temporal.api.history.v1.IHistory): ReplayEvent | undefined {
  const events = history.events ?? [];
  const byId = /HistoryEvent\(id: (\d+), (\w+)/.exec(message);
  if (byId) {
    const eventId = Number(byId[1]);
    const recorded = events.find((event) => Number(event.eventId ?? 0) === eventId);
    return { eventId, eventType: recorded?.eventType ? eventTypeName(recorded.eventType) : byId[2]! };
  }
  const patchId = /patch marker encountered for change ([^,\s]+)/.exec(message)?.[1];
  const marker = patchId ? events.find((event) => isPatchMarker(event, patchId)) : undefined;
  return marker ? { eventId: Number(marker.eventId ?? 0), eventType: eventTypeName(marker.eventType!) } : undefined;
}

/** Whether an event is the marker of the patch `patchId` (its details hold `{ "id": patchId, ... }` as JSON). */
function isPatchMarker(event: temporal.api.history.v1.IHistoryEvent, patchId: string): boolean {
  const details = event.markerRecordedEventAttributes?.details ?? {};
  return Object.values(details).some((payloads) =>
    (payloads.payloads ?? []).some((payload) => jsonId(payload.data) === patchId),
  );
}

function jsonId(data: Uint8Array | null | undefined): unknown {
  try {
    return (JSON.parse(Buffer.from(data ?? []).toString('utf8')) as { id?: unknown } | null)?.id;
  } catch {
    return undefined;
  }
}

/** `EVENT_TYPE_ACTIVITY_TASK_SCHEDULED` → `ActivityTaskScheduled`. */
function eventTypeName(eventType: temporal.api.enums.v1.EventType): string {
  const name = temporal.api.enums.v1.EventType[eventType] ?? String(eventType);
  return name
    .replace(/^EVENT_TYPE_/, '')
    .toLowerCase()
    .replace(/(^|_)([a-z])/g, (_, __, letter: string) => letter.toUpperCase());
}
