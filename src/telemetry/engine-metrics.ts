import { metrics, type Counter, type Histogram, type MeterProvider } from '@opentelemetry/api';

/** Name of the OpenTelemetry meter (and tracer) the engine records with. */
export const DURABLE_TOOLS_METER = 'durable-tools';

/**
 * Names of the engine's metrics (OpenTelemetry instruments of the `durable-tools` meter). Attributes:
 * `tool` everywhere; `outcome` on calls, durations and compensations; `classification` on retries;
 * `result` on reconciles; `compensation_of` on compensations; `decision` on approval waits.
 */
export const ENGINE_METRICS = {
  /** Counter: attempts of tool calls that ended, by `tool`, `outcome` and `compensation` (true for undo calls). */
  toolCalls: 'durable_tools.tool.calls',
  /** Histogram (ms): how long an attempt took in the wrapper, by `tool` and `outcome`. */
  toolCallDuration: 'durable_tools.tool.duration',
  /** Counter: retries the engine scheduled, by `tool` and `classification`. */
  retries: 'durable_tools.tool.retries',
  /** Histogram (ms): the delay the engine chose before each retry, by `tool`. */
  retryDelay: 'durable_tools.tool.retry_delay',
  /** Counter: retries the worker's retry budget refused (the call failed instead), by `tool`. */
  retryBudgetRefusals: 'durable_tools.retry_budget.refusals',
  /** Counter: calls that ended `OUTCOME_UNKNOWN` (may have had an effect, never repeated blindly), by `tool`. */
  unknownOutcomes: 'durable_tools.tool.unknown_outcomes',
  /** Counter: `reconcile` checks after an attempt died holding its key, by `tool` and `result` (done, not_done, failed). */
  reconciles: 'durable_tools.tool.reconciles',
  /** Counter: compensations that ended, by undo `tool`, `compensation_of` (the forward tool) and `outcome`. */
  compensations: 'durable_tools.compensations',
  /** Counter: approval waits that ended, by `tool` and `decision` (approved, rejected, timed_out, cancelled). */
  approvalWaits: 'durable_tools.approval.waits',
  /** Histogram (ms): how long a call waited for its approval decision, by `tool` and `decision`. */
  approvalWaitDuration: 'durable_tools.approval.wait_duration',
  /** Histogram (ms): how long a call waited for a slot of its tool's limits or breaker, by `tool` and `reason`. */
  slotWait: 'durable_tools.tool.slot_wait',
  /** Counter: times a tool's breaker opened (a 429 with Retry-After, a storm of 503s, a failed probe), by `tool`. */
  breakerOpens: 'durable_tools.tool.breaker_opens',
} as const;

/** The engine's instruments. */
export interface EngineMetrics {
  toolCalls: Counter;
  toolCallDuration: Histogram;
  retries: Counter;
  retryDelay: Histogram;
  retryBudgetRefusals: Counter;
  unknownOutcomes: Counter;
  reconciles: Counter;
  compensations: Counter;
  approvalWaits: Counter;
  approvalWaitDuration: Histogram;
  slotWait: Histogram;
  breakerOpens: Counter;
}

/**
 * Creates the engine's instruments on a meter provider: by default the global one, which records nothing
 * (and costs next to nothing) until an OpenTelemetry SDK registers a real provider. Register it before the
 * worker is created: the instruments are bound once.
 */
export function createEngineMetrics(provider: MeterProvider = metrics.getMeterProvider()): EngineMetrics {
  const meter = provider.getMeter(DURABLE_TOOLS_METER);
  const ms = { unit: 'ms' };
  return {
    toolCalls: meter.createCounter(ENGINE_METRICS.toolCalls, { description: 'Tool call attempts that ended.' }),
    toolCallDuration: meter.createHistogram(ENGINE_METRICS.toolCallDuration, {
      ...ms,
      description: 'Duration of tool call attempts.',
    }),
    retries: meter.createCounter(ENGINE_METRICS.retries, { description: 'Retries the engine scheduled.' }),
    retryDelay: meter.createHistogram(ENGINE_METRICS.retryDelay, {
      ...ms,
      description: 'Delay chosen before a retry.',
    }),
    retryBudgetRefusals: meter.createCounter(ENGINE_METRICS.retryBudgetRefusals, {
      description: 'Retries refused by the retry budget.',
    }),
    unknownOutcomes: meter.createCounter(ENGINE_METRICS.unknownOutcomes, {
      description: 'Tool calls that ended with an unknown outcome.',
    }),
    reconciles: meter.createCounter(ENGINE_METRICS.reconciles, {
      description: 'Reconcile checks of calls whose attempt died holding the key.',
    }),
    compensations: meter.createCounter(ENGINE_METRICS.compensations, { description: 'Compensations that ended.' }),
    approvalWaits: meter.createCounter(ENGINE_METRICS.approvalWaits, { description: 'Approval waits that ended.' }),
    approvalWaitDuration: meter.createHistogram(ENGINE_METRICS.approvalWaitDuration, {
      ...ms,
      description: 'Time a call waited for its approval decision.',
    }),
    slotWait: meter.createHistogram(ENGINE_METRICS.slotWait, {
      ...ms,
      description: "Time a call waited for a slot of its tool's limits or breaker.",
    }),
    breakerOpens: meter.createCounter(ENGINE_METRICS.breakerOpens, { description: "Times a tool's breaker opened." }),
  };
}
