import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Tool } from '../tools/define-tool';
import { parseToolArguments } from '../tools/parse-tool-arguments';
import type { ToolCatalogEntry } from '../tools/tool-catalog-entry';
import type { ToolContext } from '../tools/tool-context';
import { TOOL_ERROR_CODES, type ToolErrorObservation } from '../tools/tool-error-code';
import type { ToolRegistry } from '../tools/tool-registry';
import type { ToolActivityInput, ToolActivityResult } from './tool-activity-types';
import { toolFailure } from './tool-failure';
import { failureForThrownError } from './tool-error-handling';
import { RetryBudget } from '../tools/retry-budget';

/** Dependencies of {@link createToolActivities}. */
export interface ToolActivityDeps {
  registry: ToolRegistry;
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

/**
 * Builds the activities of a tool registry. Each tool becomes an activity whose type is the tool's
 * name. The wrapper validates arguments (the implementation never runs on bad input), runs the tool
 * with a {@link ToolContext}, validates the output and turns every failure into a structured error.
 *
 * @example
 * ```ts
 * const worker = await Worker.create({
 *   activities: { ...createToolActivities({ registry }), ...createModelActivities() },
 *   ...
 * });
 * ```
 */
export function createToolActivities(deps: ToolActivityDeps): ToolActivities {
  const activities: ToolActivities = {
    describeTools: async (names?: readonly string[]) => deps.registry.catalog(names),
  };
  const resolved = { ...deps, retryBudget: deps.retryBudget ?? new RetryBudget() };
  for (const tool of deps.registry.list()) {
    activities[tool.contract.name] = (input: ToolActivityInput) => runToolCall(tool, input, resolved);
  }
  return activities;
}

async function runToolCall(
  tool: Tool,
  input: ToolActivityInput,
  deps: ToolActivityDeps & { retryBudget: RetryBudget },
): Promise<ToolActivityResult> {
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

  const parsed = parseToolArguments(tool.contract.spec.input, input.arguments);
  if (!parsed.ok) throw toolFailure(parsed.error);

  const ctx: ToolContext = {
    idempotencyKey: input.idempotencyKey,
    stepId: input.stepId,
    runId: workflowExecution?.workflowId ?? input.idempotencyKey.split("/")[0] ?? "",
    attempt,
    signal: activity.cancellationSignal,
    heartbeat: (details?: unknown) => activity.heartbeat(details),
    log: activity.log,
  };

  if (attempt === 1) deps.retryBudget.recordFirstAttempt(entry.name);
  let rawOutput: unknown;
  try {
    rawOutput = await tool.execute(parsed.value, ctx);
  } catch (error) {
    if (activity.cancellationSignal.aborted) throw activity.cancellationSignal.reason ?? error;
    const previousDelayMs = (heartbeatDetails as RetryHeartbeat | undefined)?.retryDelayMs;
    const { failure, retryDelayMs } = failureForThrownError(error, {
      tool: entry,
      attempt,
      elapsedMs: Date.now() - scheduledTimestampMs,
      budget: deps.retryBudget,
      ...(previousDelayMs !== undefined ? { previousDelayMs } : {}),
      ...(deps.random ? { random: deps.random } : {}),
    });
    if (retryDelayMs !== undefined) activity.heartbeat({ retryDelayMs } satisfies RetryHeartbeat);
    throw failure;
  }

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
    throw toolFailure(observation);
  }
  return { output: output.data, attempt };
}
