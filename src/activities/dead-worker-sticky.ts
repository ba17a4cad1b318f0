import { Context } from '@temporalio/activity';
import { isDeadHolder, thisProcessHolder } from './holder-identity';

/** Longest wait for the server to forget a run's sticky worker before the attempt goes on regardless. */
export const STICKY_RESET_TIMEOUT_MS = 1_000;

/**
 * Called by an attempt that found its previous attempt's worker process dead (a dead-holder takeover, or the
 * model call's heartbeat naming a dead process): asks the server to forget the run's sticky worker
 * (`ResetStickyTaskQueue`), so the workflow task that follows this activity goes to the task queue at once
 * instead of waiting `stickyQueueScheduleToStartTimeout` on the dead worker's sticky queue. If the sticky
 * worker was another, live process, it only loses the run from its cache (the next task replays the history).
 * Best effort: any failure (no client in this context, the server refusing) changes nothing but the wait.
 */
export async function forgetDeadStickyWorker(): Promise<void> {
  let reset: Promise<unknown>;
  try {
    const activity = Context.current();
    const { workflowNamespace, workflowExecution } = activity.info;
    if (workflowExecution === undefined) return;
    reset = activity.client.workflowService.resetStickyTaskQueue({
      namespace: workflowNamespace,
      execution: { workflowId: workflowExecution.workflowId, runId: workflowExecution.runId },
    });
  } catch {
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, STICKY_RESET_TIMEOUT_MS);
  });
  await Promise.race([reset.catch(() => undefined), timeout]);
  clearTimeout(timer);
}

/** The heartbeat details of a model call: the owner label of the worker process that runs the attempt. */
export interface WorkerHeartbeatDetails {
  worker: string;
}

/** {@link WorkerHeartbeatDetails} of this process. */
export function workerHeartbeatDetails(): WorkerHeartbeatDetails {
  return { worker: thisProcessHolder().owner };
}

/**
 * At the start of a (non-local) activity attempt: heartbeats this worker's owner label at once, so that a retry
 * after this process dies can tell, and — on a retry — starts {@link forgetDeadStickyWorker} when the previous
 * attempt's heartbeat names a process that is provably dead, or when no heartbeat of it reached the server and
 * the server recorded it as timed out (it died, or stalled, within moments of its start: the bench's kill at the
 * start of a turn). Returns that reset (await it before the activity returns, so the workflow task that follows
 * skips the dead worker's sticky queue), or undefined.
 */
export function announceWorker(): Promise<void> | undefined {
  let activity: Context;
  try {
    activity = Context.current();
  } catch {
    return undefined;
  }
  if (activity.info.isLocal) return undefined;
  activity.heartbeat(workerHeartbeatDetails());
  if (activity.info.attempt <= 1) return undefined;
  const previous = activity.info.heartbeatDetails as Partial<WorkerHeartbeatDetails> | undefined;
  if (isDeadHolder(previous?.worker)) return forgetDeadStickyWorker();
  // No heartbeat of the previous attempt reached the server: it died (or stalled) within moments of its start,
  // or failed as fast. The server's record of its failure tells: a timeout means no worker answered for it.
  if (previous?.worker === undefined)
    return previousAttemptTimedOut().then((lost) => (lost ? forgetDeadStickyWorker() : undefined));
  return undefined;
}

/** Whether the server recorded this activity's previous attempt as timed out (heartbeat or attempt timeout). */
async function previousAttemptTimedOut(): Promise<boolean> {
  try {
    const activity = Context.current();
    const { workflowNamespace, workflowExecution, activityId } = activity.info;
    if (workflowExecution === undefined) return false;
    const described = await activity.client.workflowService.describeWorkflowExecution({
      namespace: workflowNamespace,
      execution: { workflowId: workflowExecution.workflowId, runId: workflowExecution.runId },
    });
    const pending = described.pendingActivities?.find((candidate) => candidate.activityId === activityId);
    return Boolean(pending?.lastFailure?.timeoutFailureInfo);
  } catch {
    return false;
  }
}
