import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { decodePayloads } from '../contract/decode-payloads';
import { TOOL_ERROR_CODES } from '../contract/activity-protocol';
import type { ToolProgress } from '../contract/tool-progress';
import type { ToolWaiting } from '../contract/tool-limits';
import type { AgentRunState } from '../contract/agent-run-types';

/** What a running tool activity reports through its heartbeat details, as a client reads it. */
export interface RunningCall {
  stepId: number;
  /** The tool (activity type). */
  tool: string;
  /** Temporal's attempt number of the running attempt. */
  attempt: number;
  progress?: ToolProgress;
  /** What the call waits for before its tool runs (a slot of its tool's limits, a breaker's pause). */
  waiting?: ToolWaiting;
  /**
   * How the previous attempt failed, when this is a retry: the error code its failure carried (one of
   * `TOOL_ERROR_CODES`, the `type` of the tool's `ApplicationFailure`), or `TIMEOUT` when it timed out.
   */
  lastFailureCode?: string;
  /** When the server last heard from the attempt. */
  lastHeartbeatAt?: Date;
}

/**
 * The tool calls of a run that are running now, with their latest progress: read from the pending activities
 * of the workflow's description (their heartbeat details), not from the workflow, which never sees heartbeats.
 * Works without a worker.
 */
export async function runningCalls(client: Client, workflowId: string): Promise<RunningCall[]> {
  const description = await client.workflow.getHandle(workflowId).describe();
  const calls: RunningCall[] = [];
  for (const pending of description.raw.pendingActivities ?? []) {
    const [details] = await decodePayloads(
      client.options.loadedDataConverter,
      pending.heartbeatDetails?.payloads,
    ).catch(() => [undefined]);
    const stepId = (details as { stepId?: unknown } | undefined)?.stepId;
    if (typeof stepId !== 'number') continue;
    const progress = (details as { progress?: ToolProgress }).progress;
    const waiting = (details as { waiting?: ToolWaiting }).waiting;
    const seconds = pending.lastHeartbeatTime?.seconds;
    const lastFailureCode = failureCodeOf(pending.lastFailure);
    calls.push({
      stepId,
      tool: pending.activityType?.name ?? '',
      attempt: pending.attempt ?? 1,
      ...(progress ? { progress } : {}),
      ...(waiting ? { waiting } : {}),
      ...(lastFailureCode ? { lastFailureCode } : {}),
      ...(seconds != null ? { lastHeartbeatAt: new Date(Number(seconds) * 1000) } : {}),
    });
  }
  return calls;
}

/** The code of an attempt's failure as the server keeps it: an ApplicationFailure's type, or TIMEOUT. */
function failureCodeOf(failure: temporal.api.failure.v1.IFailure | null | undefined): string | undefined {
  if (!failure) return undefined;
  if (failure.applicationFailureInfo?.type) return failure.applicationFailureInfo.type;
  if (failure.timeoutFailureInfo) return TOOL_ERROR_CODES.TIMEOUT;
  return undefined;
}

/**
 * The run state with each running step's latest progress filled in (see {@link runningCalls}); the state as
 * it is when the workflow's description cannot be read.
 */
export async function withLiveProgress(client: Client, state: AgentRunState): Promise<AgentRunState> {
  if (!Array.isArray(state?.steps) || !state.steps.some((step) => step.status === 'running')) return state;
  // Progress is an addition: a description that cannot be read leaves the state as the workflow answered it.
  const calls = await runningCalls(client, state.workflowId).catch(() => []);
  const byStep = new Map(calls.map((call) => [call.stepId, call]));
  return {
    ...state,
    steps: state.steps.map((step) => {
      const call = step.status === 'running' ? byStep.get(step.stepId) : undefined;
      if (!call?.progress && !call?.waiting) return step;
      return {
        ...step,
        ...(call.progress ? { progress: call.progress } : {}),
        ...(call.waiting ? { waiting: call.waiting } : {}),
      };
    }),
  };
}
