import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { hostname } from 'node:os';
import type { IdempotencyStore } from '../idempotency/idempotency-store';
import type { Tool } from '../tools/define-tool';
import { parseToolArguments } from '../tools/parse-tool-arguments';
import { RetryBudget } from '../tools/retry-budget';
import type { ToolCatalogEntry, ToolRetrySettings } from '../tools/tool-catalog-entry';
import type { ToolContext } from '../tools/tool-context';
import type { ToolRegistry } from '../tools/tool-registry';
import type { ToolActivityInput, ToolActivityResult } from './tool-activity-types';
import { claimKey, storedFailureOf } from './tool-call-idempotency';
import { failureForThrownError } from './tool-error-handling';
import { TOOL_ERROR_CODES, toolFailure, type ToolErrorObservation } from '../protocol/activity-protocol';

/** Lease of an idempotency key while a call runs, and how often it is renewed. */
export const TOOL_CALL_LEASE = {
  leaseMs: 30_000,
  /** Renew (and heartbeat Temporal) every leaseMs / renewDivisor. */
  renewDivisor: 3,
} as const;

/** Retry settings of a compensation: retried until it succeeds or fails permanently. */
const COMPENSATION_RETRY_OVERRIDES = {
  maximumAttempts: Number.MAX_SAFE_INTEGER,
  totalDeadlineMs: Number.POSITIVE_INFINITY,
} as const;

/** Dependencies of {@link createToolActivities}. */
export interface ToolActivityDeps {
  registry: ToolRegistry;
  /**
   * Durable idempotency keys. With a store, a call with effects runs at most once per key across retries,
   * worker crashes and several workers; without one, each attempt may run the tool again.
   */
  idempotencyStore?: IdempotencyStore;
  /** Lease of a key while a call runs (default 30 s); renewed every third of it while the tool runs. */
  leaseMs?: number;
  /** Retry budget of this worker process (default: one per set of activities, 10% of calls once empty). */
  retryBudget?: RetryBudget;
  /** Uniform random source for jitter (tests inject a seeded one). */
  random?: () => number;
}

/** Heartbeat detail the wrapper leaves so the next attempt knows the previous delay. */
interface RetryHeartbeat {
  retryDelayMs?: number;
}

/** An activity implementing one tool call. */
export type ToolActivity = (input: ToolActivityInput) => Promise<ToolActivityResult>;

/** The activities a worker registers for its tools: one per tool, named after it, plus `describeTools`. */
export interface ToolActivities {
  /** Returns the JSON catalog (all tools, or the named ones). Recorded in history, so replay is stable. */
  describeTools(names?: readonly string[]): Promise<ToolCatalogEntry[]>;
  [toolName: string]: ToolActivity | ((names?: readonly string[]) => Promise<ToolCatalogEntry[]>);
}

type ResolvedDeps = ToolActivityDeps & { retryBudget: RetryBudget; leaseMs: number; owner: string };

/**
 * Builds the activities of a tool registry. Each tool becomes an activity whose type is the tool's
 * name. The wrapper validates arguments (the implementation never runs on bad input), claims the call's
 * idempotency key (tools with effects, when a store is given), runs the tool with a {@link ToolContext}
 * while renewing the key's lease, validates the output, records the outcome, and turns every failure
 * into a structured error with an engine-chosen retry delay.
 *
 * @example
 * ```ts
 * const worker = await Worker.create({
 *   activities: {
 *     ...createToolActivities({ registry, idempotencyStore: new SqliteIdempotencyStore() }),
 *     ...createModelActivities({ registry }),
 *   },
 *   ...
 * });
 * ```
 */
export function createToolActivities(deps: ToolActivityDeps): ToolActivities {
  const activities: ToolActivities = {
    describeTools: async (names?: readonly string[]) => deps.registry.catalog(names),
  };
  const resolved: ResolvedDeps = {
    ...deps,
    retryBudget: deps.retryBudget ?? new RetryBudget(),
    leaseMs: deps.leaseMs ?? TOOL_CALL_LEASE.leaseMs,
    owner: `${hostname()}:${process.pid}`,
  };
  for (const tool of deps.registry.list()) {
    activities[tool.contract.name] = (input: ToolActivityInput) => runToolCall(tool, input, resolved);
  }
  return activities;
}

async function runToolCall(tool: Tool, input: ToolActivityInput, deps: ResolvedDeps): Promise<ToolActivityResult> {
  const activity = Context.current();
  const { attempt, workflowExecution, scheduledTimestampMs, heartbeatDetails } = activity.info;
  const entry = tool.contract.catalogEntry;
  if (!input || typeof input !== 'object' || typeof input.idempotencyKey !== 'string') {
    throw ApplicationFailure.create({
      type: TOOL_ERROR_CODES.INTERNAL,
      nonRetryable: true,
      message: `Tool activity "${entry.name}" was called without a ToolActivityInput ({ arguments, idempotencyKey, stepId }).`,
    });
  }
  const compensating = typeof input.compensationOf === 'string';
  const retry: ToolRetrySettings = compensating ? { ...entry.retry, ...COMPENSATION_RETRY_OVERRIDES } : entry.retry;

  const parsed = parseToolArguments(tool.contract.spec.input, input.arguments);
  if (!parsed.ok) throw toolFailure(parsed.error, { mayHaveHadEffect: false });

  const ctx: ToolContext = {
    idempotencyKey: input.idempotencyKey,
    stepId: input.stepId,
    runId: workflowExecution?.workflowId ?? input.idempotencyKey.split('/')[0] ?? '',
    attempt,
    signal: activity.cancellationSignal,
    heartbeat: (details?: unknown) => activity.heartbeat(details),
    log: activity.log,
  };

  const store = entry.effect === 'read-only' ? undefined : deps.idempotencyStore;
  let token: string | undefined;
  if (store) {
    const decision = await claimKey(store, tool, parsed.value, ctx, {
      owner: `${deps.owner}/attempt-${attempt}`,
      leaseMs: deps.leaseMs,
      maximumAttempts: retry.maximumAttempts,
    }).catch((error: unknown) => {
      if (error instanceof ApplicationFailure) throw error;
      throw storeUnavailable(entry, retry, attempt, error);
    });
    if (decision.kind === 'replay') return { output: decision.output, attempt, replayed: true };
    token = decision.token;
  }

  if (attempt === 1 && !compensating) deps.retryBudget.recordFirstAttempt(entry.name);
  const stopRenewing = renewWhileRunning(store, ctx, token, deps.leaseMs, activity.info.heartbeatTimeoutMs);
  let rawOutput: unknown;
  try {
    rawOutput = await tool.execute(parsed.value, ctx);
  } catch (error) {
    stopRenewing();
    if (activity.cancellationSignal.aborted) throw activity.cancellationSignal.reason ?? error;
    const previousDelayMs = (heartbeatDetails as RetryHeartbeat | undefined)?.retryDelayMs;
    const { failure, retryDelayMs } = failureForThrownError(error, {
      tool: { ...entry, retry },
      attempt,
      elapsedMs: Date.now() - scheduledTimestampMs,
      ...(compensating ? {} : { budget: deps.retryBudget }),
      ...(previousDelayMs !== undefined ? { previousDelayMs } : {}),
      ...(deps.random ? { random: deps.random } : {}),
    });
    if (store && token) {
      // A transient failure is forgotten so the next attempt starts fresh; a final one is kept for replay.
      if (retryDelayMs !== undefined) await store.release(ctx.idempotencyKey, token).catch(() => false);
      else await recordFinalFailure(store, ctx.idempotencyKey, token, failure);
    }
    if (retryDelayMs !== undefined) activity.heartbeat({ retryDelayMs } satisfies RetryHeartbeat);
    throw failure;
  }
  stopRenewing();

  const output = tool.contract.spec.output.safeParse(rawOutput);
  if (!output.success) {
    const observation: ToolErrorObservation = {
      status: 'error',
      code: TOOL_ERROR_CODES.INVALID_OUTPUT,
      message: `Tool "${entry.name}" returned a result that does not match its output schema.`,
      hint: 'This is a fault of the tool, not of your call. Do not repeat the call; report it or try another way.',
      retryable: false,
      attempts: attempt,
      issues: output.error.issues.map((i) => ({ path: i.path.join('.') || '(root)', message: i.message })),
    };
    const facts = { mayHaveHadEffect: true };
    if (store && token)
      await store.fail(ctx.idempotencyKey, token, storedFailureOf(observation, facts)).catch(() => {});
    throw toolFailure(observation, facts);
  }
  if (store && token) {
    try {
      await store.complete(ctx.idempotencyKey, token, output.data);
    } catch (error) {
      // The effect happened but is not recorded: the next attempt finds the key in flight, then unknown,
      // and reconciles (or re-runs an idempotent tool, or stops with OUTCOME_UNKNOWN). Never a blind repeat.
      throw storeUnavailable(entry, retry, attempt, error);
    }
  }
  return { output: output.data, attempt };
}

/** Renews the key's lease and heartbeats Temporal (which also delivers cancellation) while the tool runs. */
function renewWhileRunning(
  store: IdempotencyStore | undefined,
  ctx: ToolContext,
  token: string | undefined,
  leaseMs: number,
  heartbeatTimeoutMs: number | undefined,
): () => void {
  const period = Math.min(leaseMs, heartbeatTimeoutMs || Number.POSITIVE_INFINITY);
  ctx.heartbeat();
  const timer = setInterval(
    () => {
      ctx.heartbeat();
      if (store && token) {
        store
          .heartbeat(ctx.idempotencyKey, token, leaseMs)
          .catch((error: unknown) => ctx.log.warn('Could not renew the idempotency lease.', { error: String(error) }));
      }
    },
    Math.max(50, Math.floor(period / TOOL_CALL_LEASE.renewDivisor)),
  );
  timer.unref();
  return () => clearInterval(timer);
}

async function recordFinalFailure(
  store: IdempotencyStore,
  key: string,
  token: string,
  failure: ApplicationFailure,
): Promise<void> {
  const [observation, facts] = (failure.details ?? []) as [ToolErrorObservation?, { mayHaveHadEffect: boolean }?];
  if (!observation) {
    // A tool's own ApplicationFailure: nothing structured to replay; let the next attempt decide afresh.
    await store.release(key, token).catch(() => false);
    return;
  }
  await store.fail(key, token, storedFailureOf(observation, facts ?? { mayHaveHadEffect: true })).catch(() => {});
}

function storeUnavailable(
  entry: ToolCatalogEntry,
  retry: ToolRetrySettings,
  attempt: number,
  cause: unknown,
): ApplicationFailure {
  const observation: ToolErrorObservation = {
    status: 'error',
    code: TOOL_ERROR_CODES.UNAVAILABLE,
    message: `The idempotency store could not be reached for "${entry.name}": ${cause instanceof Error ? cause.message : String(cause)}`,
    hint: 'Try again later.',
    retryable: true,
    attempts: attempt,
  };
  const lastAttempt = attempt >= retry.maximumAttempts;
  return toolFailure(
    observation,
    { mayHaveHadEffect: true },
    lastAttempt ? undefined : Math.min(retry.maxDelayMs, retry.initialDelayMs * 2 ** (attempt - 1)),
  );
}
