import { trace, type Attributes, type Span } from '@opentelemetry/api';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { msOptionalToNumber } from '@temporalio/common/lib/time';
import type { FailureKind } from '../failures/classify';
import type { NoRetryReason } from '../failures/retry-decision';
import { TOOL_ERROR_CODES } from '../contract/activity-protocol';
import { ERROR_TYPE_OTHER, GEN_AI_ATTRIBUTES } from '../contract/gen-ai-conventions';
import type { EngineMetrics } from './engine-metrics';

/** Attributes the engine sets on the span of a tool call attempt (Temporal's `RunActivity:<tool>`). */
export const TOOL_CALL_SPAN_ATTRIBUTES = {
  tool: 'durable_tools.tool',
  idempotencyKey: 'durable_tools.idempotency_key',
  stepId: 'durable_tools.step_id',
  /** Temporal's attempt number, from 1. */
  attempt: 'durable_tools.attempt',
  /** Set on a compensation: the forward tool it undoes. */
  compensationOf: 'durable_tools.compensation_of',
  /** transient, permanent or rate-limited, when the attempt failed. */
  classification: 'durable_tools.classification',
  /** The delay the engine chose before the next attempt. */
  retryDelayMs: 'durable_tools.retry_delay_ms',
  /** See {@link ToolCallOutcome}. */
  outcome: 'durable_tools.outcome',
  /** The observation's code when the attempt failed (e.g. `UNAVAILABLE`). */
  errorCode: 'durable_tools.error_code',
  /** Set when a `reconcile` check ran: done, not_done or failed. */
  reconcile: 'durable_tools.reconcile',
} as const;

/**
 * How a tool call attempt ended: `succeeded`, `replayed` (the key store had the result), `retrying` (the engine
 * scheduled another attempt), `failed` (final failure), `outcome_unknown` (may have had an effect; never
 * repeated blindly), `cancelled`.
 */
export type ToolCallOutcome = 'succeeded' | 'replayed' | 'retrying' | 'failed' | 'outcome_unknown' | 'cancelled';

/** What a {@link ToolCallRecord} is about. */
export interface ToolCallFacts {
  tool: string;
  idempotencyKey: string;
  stepId: number;
  attempt: number;
  compensationOf?: string;
}

/**
 * Telemetry of one tool call attempt: attributes on the active span (the activity's span when tracing is on)
 * and the engine's metrics. Without an OpenTelemetry SDK both are no-ops.
 */
export class ToolCallRecord {
  private classification: FailureKind | undefined;
  private refusedBy: NoRetryReason | undefined;
  private readonly span: Span | undefined = trace.getActiveSpan();
  private readonly startedAt = performance.now();

  constructor(
    private readonly metrics: EngineMetrics,
    private readonly facts: ToolCallFacts,
  ) {
    this.span?.setAttributes({
      [TOOL_CALL_SPAN_ATTRIBUTES.tool]: facts.tool,
      [TOOL_CALL_SPAN_ATTRIBUTES.idempotencyKey]: facts.idempotencyKey,
      [TOOL_CALL_SPAN_ATTRIBUTES.stepId]: facts.stepId,
      [TOOL_CALL_SPAN_ATTRIBUTES.attempt]: facts.attempt,
      ...(facts.compensationOf ? { [TOOL_CALL_SPAN_ATTRIBUTES.compensationOf]: facts.compensationOf } : {}),
    });
  }

  /** The tool threw: how the error was classified, and why no retry follows when none does. */
  classified(kind: FailureKind, refusedBy?: NoRetryReason): void {
    this.classification = kind;
    this.refusedBy = refusedBy;
  }

  /** A `reconcile` check ran after an earlier attempt died holding the key. */
  reconciled(result: 'done' | 'not_done' | 'failed'): void {
    this.span?.setAttribute(TOOL_CALL_SPAN_ATTRIBUTES.reconcile, result);
    this.metrics.reconciles.add(1, { tool: this.facts.tool, result });
  }

  /** The attempt returned a result (run now, or replayed from the key store). */
  succeeded(replayed: boolean): void {
    this.end(replayed ? 'replayed' : 'succeeded', {});
  }

  /** The attempt threw `error` (what the activity throws). */
  failed(error: unknown): void {
    const outcome = outcomeOf(error);
    const code = errorCodeOf(error);
    const retryDelayMs =
      outcome === 'retrying' && error instanceof ApplicationFailure
        ? msOptionalToNumber(error.nextRetryDelay ?? undefined)
        : undefined;
    const classification = this.classification ?? implicitClassification(outcome, code);
    const tool = this.facts.tool;
    if (outcome === 'retrying') {
      this.metrics.retries.add(1, { tool, ...(classification ? { classification } : {}) });
      if (retryDelayMs !== undefined) this.metrics.retryDelay.record(retryDelayMs, { tool });
    }
    if (this.refusedBy === 'budget-exhausted') this.metrics.retryBudgetRefusals.add(1, { tool });
    if (outcome === 'outcome_unknown') this.metrics.unknownOutcomes.add(1, { tool });
    this.end(outcome, {
      // The convention's class of error (docs/telemetry.md): the observation's code, as `durable_tools.error_code`.
      [GEN_AI_ATTRIBUTES.errorType]: code ?? ERROR_TYPE_OTHER,
      ...(code ? { [TOOL_CALL_SPAN_ATTRIBUTES.errorCode]: code } : {}),
      ...(classification ? { [TOOL_CALL_SPAN_ATTRIBUTES.classification]: classification } : {}),
      ...(retryDelayMs !== undefined ? { [TOOL_CALL_SPAN_ATTRIBUTES.retryDelayMs]: retryDelayMs } : {}),
    });
  }

  private end(outcome: ToolCallOutcome, spanAttributes: Attributes): void {
    const { tool, compensationOf } = this.facts;
    this.span?.setAttributes({ ...spanAttributes, [TOOL_CALL_SPAN_ATTRIBUTES.outcome]: outcome });
    const compensation = compensationOf !== undefined;
    this.metrics.toolCalls.add(1, { tool, outcome, compensation });
    this.metrics.toolCallDuration.record(performance.now() - this.startedAt, { tool, outcome });
    if (compensation && outcome !== 'retrying') {
      this.metrics.compensations.add(1, { tool, compensation_of: compensationOf, outcome });
    }
  }
}

function outcomeOf(error: unknown): ToolCallOutcome {
  if (error instanceof CancelledFailure) return 'cancelled';
  if (!(error instanceof ApplicationFailure)) return 'failed';
  if (error.type === TOOL_ERROR_CODES.OUTCOME_UNKNOWN) return 'outcome_unknown';
  return error.nonRetryable ? 'failed' : 'retrying';
}

function errorCodeOf(error: unknown): string | undefined {
  if (error instanceof ApplicationFailure) return error.type ?? undefined;
  if (error instanceof CancelledFailure) return TOOL_ERROR_CODES.CANCELLED;
  return undefined;
}

/** A failure the wrapper raised itself (key in flight, lease lost, store down): transient when it retries. */
function implicitClassification(outcome: ToolCallOutcome, code: string | undefined): FailureKind | undefined {
  if (outcome === 'retrying') return code === TOOL_ERROR_CODES.RATE_LIMITED ? 'rate-limited' : 'transient';
  if (outcome === 'failed') return 'permanent';
  return undefined;
}
