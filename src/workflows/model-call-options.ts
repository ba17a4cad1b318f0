import { ActivityCancellationType, type ActivityOptions } from '@temporalio/workflow';
import { MODEL_CALL_LIMITS } from '../contract/model-call-limits';
import type { ModelSettings } from '../contract/model-types';
import { ENGINE_ACTIVITY_OPTIONS } from './agent-run-defaults';

/**
 * Activity options of one model turn: the start-to-close timeout follows the turn's deadline (the run's
 * `turnTimeoutMs` setting, default 90 s) so a hanging provider is given up on, the attempts follow
 * `maxAttempts` (default 5), and the summary shown in the UI carries the turn and the tokens used so far.
 */
export function modelCallOptions(settings: ModelSettings, summary: string): ActivityOptions {
  const base = ENGINE_ACTIVITY_OPTIONS.callModel;
  const turnTimeoutMs = positiveNumber(settings.turnTimeoutMs) ?? MODEL_CALL_LIMITS.turnTimeoutMs;
  const maxAttempts = positiveNumber(settings.maxAttempts);
  return {
    ...base,
    startToCloseTimeout: turnTimeoutMs + MODEL_CALL_LIMITS.startToCloseMarginMs,
    retry: { ...base.retry, ...(maxAttempts !== undefined ? { maximumAttempts: Math.floor(maxAttempts) } : {}) },
    cancellationType: ActivityCancellationType.TRY_CANCEL,
    summary,
  };
}

function positiveNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 1 ? value : undefined;
}
