import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal as proto } from '@temporalio/proto';

/** An event of a run's history. */
export type HistoryEvent = proto.api.history.v1.IHistoryEvent;

/** The local activities of a history (their markers): activity type and summary, in order. */
export function localActivities(events: readonly HistoryEvent[]): { type: string; summary: string | undefined }[] {
  return events
    .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')
    .map((e) => {
      const data = e.markerRecordedEventAttributes!.details!.data!.payloads![0]!;
      const marker = defaultPayloadConverter.fromPayload<{ activity_type: string }>(data);
      const summary = e.userMetadata?.summary;
      return {
        type: marker.activity_type,
        summary: summary ? defaultPayloadConverter.fromPayload<string>(summary) : undefined,
      };
    });
}

/** The patch ids a history recorded (`patched()` markers), in order. */
export function recordedPatches(events: readonly HistoryEvent[]): string[] {
  return events
    .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
    .map((e) => {
      const data = e.markerRecordedEventAttributes!.details!['patch-data']!.payloads![0]!;
      return defaultPayloadConverter.fromPayload<{ id: string }>(data).id;
    });
}
