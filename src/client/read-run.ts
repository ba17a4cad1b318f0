import { WorkflowFailedError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { runResultOfFailure, type RunHistory } from './agent-run-client';
import { agentRunStateOf } from './agent-run-state-of';
import type { ToolActivityInput } from '../contract/tool-activity-types';
import type { ToolErrorObservation } from '../contract/activity-protocol';
import { getRunStateQuery } from '../contract/agent-run-messages';
import type { AgentRunState, StepRecord } from '../contract/agent-run-types';

/** How long `show` waits for a worker to answer a query before reading the history instead. */
export const READ_RUN_TIMING = { queryTimeoutMs: 5_000 } as const;

/** A run as `show` and `diff` read it (`diffAgentRuns`). */
export interface RunView {
  description: WorkflowExecutionDescription;
  /** The run's state: its result when it ended, else the worker's answer to `getRunState`. */
  state?: AgentRunState;
  /** Steps rebuilt from the history when no state could be read (no worker answered). */
  historySteps?: StepRecord[];
}

/**
 * Reads a run: a finished run's result from its history (completed: the return value; failed, compensated,
 * compensation_failed: the failure's details), a running or cancelled run's state from the `getRunState`
 * query, and when no worker answers, its tool calls from the history.
 */
export async function readRun(client: Client, workflowId: string): Promise<RunView> {
  const handle = client.workflow.getHandle(workflowId);
  const description = await handle.describe();
  const status = description.status.name;
  if (status === 'COMPLETED') return { description, state: agentRunStateOf((await handle.result()) as AgentRunState) };
  if (status === 'FAILED') {
    const state = await handle.result().then(
      () => undefined,
      (error: unknown) => (error instanceof WorkflowFailedError ? runResultOfFailure(error) : undefined),
    );
    if (state) return { description, state };
  }
  const state = await client.connection
    .withDeadline(Date.now() + READ_RUN_TIMING.queryTimeoutMs, () => handle.query(getRunStateQuery))
    .catch(() => undefined);
  if (state) return { description, state: agentRunStateOf(state) };
  const history = await handle.fetchHistory();
  await decodeToolPayloads(client, history);
  return { description, historySteps: stepsFromHistory(history) };
}

/**
 * Runs the client's payload codecs (decryption) over the tool calls' inputs and results of a history, in
 * place, so that an encrypted run's steps read in clear; a payload a codec refuses is left as it is.
 */
async function decodeToolPayloads(client: Client, history: RunHistory): Promise<void> {
  const codecs = [...client.options.loadedDataConverter.payloadCodecs].reverse();
  if (codecs.length === 0) return;
  for (const event of history.events ?? []) {
    const holders = [
      event.activityTaskScheduledEventAttributes?.input,
      event.activityTaskCompletedEventAttributes?.result,
    ];
    for (const holder of holders) {
      if (!holder?.payloads) continue;
      let payloads = holder.payloads;
      try {
        for (const codec of codecs) payloads = await codec.decode(payloads);
        holder.payloads = payloads;
      } catch {
        // Shown without its arguments, like any payload that cannot be read.
      }
    }
  }
}

/** The tool calls of a history (compensations included), for a run no worker can describe. */
export function stepsFromHistory(history: RunHistory): StepRecord[] {
  const byScheduledId = new Map<string, StepRecord>();
  const engineActivities = new Set(['describeTools', 'callModel']);
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const type = scheduled.activityType?.name ?? '';
      if (engineActivities.has(type)) continue;
      const input = decode(scheduled.input?.payloads?.[0]) as ToolActivityInput | undefined;
      byScheduledId.set(String(event.eventId), {
        stepId: input?.stepId ?? 0,
        turn: 0,
        toolCallId: '',
        tool: input?.compensationOf ? `${type} (undo of ${input.compensationOf})` : type,
        arguments: input?.arguments,
        idempotencyKey: input?.idempotencyKey ?? '',
        status: 'running',
      });
      continue;
    }
    const completed = event.activityTaskCompletedEventAttributes;
    const failed = event.activityTaskFailedEventAttributes;
    const ended =
      completed ?? failed ?? event.activityTaskCanceledEventAttributes ?? event.activityTaskTimedOutEventAttributes;
    const step = ended ? byScheduledId.get(String(ended.scheduledEventId)) : undefined;
    if (!step) continue;
    if (completed) {
      const result = decode(completed.result?.payloads?.[0]) as { output?: unknown; attempt?: number } | undefined;
      step.status = 'succeeded';
      step.observation = { status: 'ok', output: result?.output } as StepRecord['observation'];
      if (result?.attempt !== undefined) step.attempts = result.attempt;
    } else {
      step.status = 'failed';
      const failure = failed?.failure;
      // The whole observation (message, hint, attempts) when the failure carries one in its details.
      const carried = decode(failure?.applicationFailureInfo?.details?.payloads?.[0]) as
        Partial<ToolErrorObservation> | undefined;
      step.observation = {
        status: 'error',
        code: failure?.applicationFailureInfo?.type ?? 'FAILED',
        message: failure?.message ?? 'the call did not complete',
        ...(typeof carried?.hint === 'string' ? { hint: carried.hint } : {}),
        ...(typeof carried?.message === 'string' ? { message: carried.message } : {}),
      } as StepRecord['observation'];
    }
  }
  return [...byScheduledId.values()];
}

function decode(payload: { data?: Uint8Array | null } | undefined | null): unknown {
  if (!payload?.data) return undefined;
  try {
    return JSON.parse(Buffer.from(payload.data).toString('utf8'));
  } catch {
    return undefined;
  }
}
