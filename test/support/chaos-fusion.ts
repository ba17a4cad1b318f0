import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal as proto } from '@temporalio/proto';

type HistoryEvent = proto.api.history.v1.IHistoryEvent;

/** Where a tool's calls ran, read from the runs' histories (docs/fast-path.md, "The fused step"). */
export interface ChaosCallPlaces {
  /**
   * Calls a fused step ran: in the `executed` of a `callModelAndTools` or `describeToolsAndCallModel` (a run's
   * first step) marker's result or of a turn it chained.
   */
  fused: number;
  /** Calls that ran as their own local activity (a marker of that activity type). */
  local: number;
  /** Calls scheduled as regular activities. */
  regular: number;
  /** `callModelAndTools` and `describeToolsAndCallModel` markers in all (fused steps, whatever they ran). */
  fusedSteps: number;
  /** Histories read. */
  histories: number;
}

const LOCAL_ACTIVITY_MARKER = 'core_local_activity';
/** A fused step's activity types: a run's first step reads the catalog too (docs/fast-path.md, "The first step"). */
const FUSED_STEP_ACTIVITIES: readonly string[] = ['callModelAndTools', 'describeToolsAndCallModel'];

/** Where the calls of `tool` ran in one history: see {@link ChaosCallPlaces}. */
export function callPlacesIn(events: readonly HistoryEvent[], tool: string): Omit<ChaosCallPlaces, 'histories'> {
  const places = { fused: 0, local: 0, regular: 0, fusedSteps: 0 };
  for (const event of events) {
    if (event.activityTaskScheduledEventAttributes?.activityType?.name === tool) places.regular += 1;
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName !== LOCAL_ACTIVITY_MARKER) continue;
    const data = decode<{ activity_type?: string }>(marker.details?.data?.payloads?.[0]);
    if (data?.activity_type === tool) places.local += 1;
    if (!FUSED_STEP_ACTIVITIES.includes(data?.activity_type ?? '')) continue;
    places.fusedSteps += 1;
    type Ran = { executed?: Array<{ tool?: string }> };
    const result = decode<Ran & { chained?: Ran[] }>(marker.details?.result?.payloads?.[0]);
    // The step's own turn, then the turns it chained (docs/fast-path.md, "Chained turns").
    for (const turn of [result ?? {}, ...(result?.chained ?? [])]) {
      places.fused += (turn.executed ?? []).filter((call) => call.tool === tool).length;
    }
  }
  return places;
}

/** Reads the histories of `workflowIds` and adds up where the calls of `tool` ran. */
export async function countCallPlaces(
  client: Client,
  workflowIds: readonly string[],
  tool: string,
): Promise<ChaosCallPlaces> {
  const total: ChaosCallPlaces = { fused: 0, local: 0, regular: 0, fusedSteps: 0, histories: 0 };
  for (const workflowId of workflowIds) {
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const places = callPlacesIn(history.events ?? [], tool);
    total.fused += places.fused;
    total.local += places.local;
    total.regular += places.regular;
    total.fusedSteps += places.fusedSteps;
    total.histories += 1;
  }
  return total;
}

/** A payload of a history decoded with the default converter; undefined when it is missing or not JSON. */
export function decode<T>(payload: proto.api.common.v1.IPayload | null | undefined): T | undefined {
  if (!payload) return undefined;
  try {
    return defaultPayloadConverter.fromPayload<T>(payload);
  } catch {
    return undefined;
  }
}
