import { proxyLocalActivities, workflowInfo, type LocalActivityOptions } from '@temporalio/workflow';
import type { CallModelInput } from '../activities/model-activities';
import type { RecordedModelActivities } from '../activities/recorded-model-turn';
import { FAST_PATH_LIMITS } from '../contract/fast-path';
import type { ModelSettings, ModelTurn } from '../contract/model-types';
import { modelCallOptions } from './model-call-options';

/**
 * The key a fast-path model turn is recorded under: `${workflowId}/${runId}/turn/${turn}`. The current
 * execution's run id, not the workflow id alone: a workflow id started again, a reset and the next
 * continue-as-new generation each have their own, so none of them reads another execution's turns.
 */
export function modelTurnKey(turn: number): string {
  return `${modelTurnKeyPrefix()}${turn}`;
}

/** {@link modelTurnKey} without the turn's number: `${workflowId}/${runId}/turn/`. */
export function modelTurnKeyPrefix(): string {
  const { workflowId, runId } = workflowInfo();
  return `${workflowId}/${runId}/turn/`;
}

/**
 * Local activity options of a model turn: the regular turn's timeout, attempts and summary, without the
 * heartbeat (a local activity has none: its worker's liveness is the workflow task's), and with long retry
 * delays (a provider's Retry-After) waited on a server timer.
 */
export function localModelCallOptions(settings: ModelSettings, summary: string): LocalActivityOptions {
  const regular = modelCallOptions(settings, summary);
  return {
    startToCloseTimeout: regular.startToCloseTimeout!,
    ...(regular.retry ? { retry: regular.retry } : {}),
    cancellationType: regular.cancellationType!,
    localRetryThreshold: FAST_PATH_LIMITS.localRetryThresholdMs,
    summary,
  };
}

/**
 * Asks the model for turn `turn` as a local activity (`callModelOnce`): the worker records the answer under
 * {@link modelTurnKey} before the workflow sees it, so a retried workflow task gets the same turn back.
 */
export function callModelLocally(
  request: CallModelInput,
  settings: ModelSettings,
  summary: string,
): Promise<ModelTurn> {
  const { callModelOnce } = proxyLocalActivities<RecordedModelActivities>(localModelCallOptions(settings, summary));
  return callModelOnce({ ...request, turnKey: modelTurnKey(request.turn + 1) });
}
