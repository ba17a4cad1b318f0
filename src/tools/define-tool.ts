import { z } from 'zod';
import type { Duration } from '@temporalio/common';
import { catalogApproval, type ToolApprovalPolicy } from '../contract/approval-policy';
import type { JitterStrategy, ToolCatalogEntry, ToolEffect, ToolExecution } from '../contract/tool-catalog-entry';
import { resolveToolBudget, type ToolBudgetOptions } from '../contract/tool-budget';
import { checkArgumentGuardOptions, type ArgumentGuardOptions } from '../guard/argument-guard-options';
import type { ToolContext } from './tool-context';
import {
  checkApproval,
  checkIdempotent,
  checkNotReserved,
  checkUndoIsAnotherTool,
  durationMs,
  resolveRetry,
  resolveTimeout,
} from './tool-declaration-checks';
import { TOOL_NAME_PATTERN } from '../contract/tool-defaults';
import { resolveLongCall, type ToolLongCallOptions } from './long-call';
import { ToolDefinitionError } from '../contract/tool-definition-error';
import { resolveToolLimits, type ToolConcurrencyOptions, type ToolRateLimitOptions } from './tool-limits';
import { resolveToolCache, type ToolCacheOptions } from './tool-cache-option';

/** Retry settings a tool may override; durations as Temporal durations (`'2s'`, `500`). */
export interface ToolRetryOptions {
  maximumAttempts?: number;
  initialDelay?: Duration;
  maxDelay?: Duration;
  jitter?: JitterStrategy;
  totalDeadline?: Duration;
}

/**
 * The effect tier of a read-only tool. `idempotent` may be left out: it defaults to `true`, since a call that
 * changes nothing can always run again.
 */
export interface ReadOnlyToolEffect {
  effect: 'read-only';
  /** Defaults to `true` (a read-only call can always run again). */
  idempotent?: boolean;
}

/**
 * The effect tier of a tool with effects. `idempotent` is required here: only the tool's author knows whether
 * the downstream deduplicates by the idempotency key, and neither default is safe for every tool (`true`
 * repeats the effect of a downstream that does not; `false` turns every crash in the middle of a call of a
 * downstream that does into an `OUTCOME_UNKNOWN`). A TypeScript error "Property 'idempotent' is missing …
 * but required in type 'ToolWithEffects'" means: decide it.
 */
export interface ToolWithEffects {
  effect: 'compensable' | 'irreversible';
  /**
   * `true` when the downstream deduplicates by `ctx.idempotencyKey` (send it with `withIdempotencyKey` or
   * `idempotentFetch`): after a crash left a call's outcome unknown, the engine runs it again. `false`: such a
   * call ends `OUTCOME_UNKNOWN` (or is settled by `reconcile`), never a second effect.
   */
  idempotent: boolean;
}

/** A tool's effect tier and whether its calls may run again: see {@link ReadOnlyToolEffect} and {@link ToolWithEffects}. */
export type ToolEffectDeclaration = ReadOnlyToolEffect | ToolWithEffects;

/**
 * The contract of a tool: pure data plus zod schemas. It says what the tool does, what it takes and
 * returns, and how it may be retried, undone or approved. The implementation is attached separately
 * with {@link ToolContract.implement}, so the contract can be shared without the code that runs it.
 * `effect` and `idempotent` come from {@link ToolEffectDeclaration}: `idempotent` defaults to `true` for
 * read-only tools and must be given for the others.
 */
export type ToolSpec<
  I extends z.ZodType = z.ZodType,
  O extends z.ZodType = z.ZodType,
  N extends string = string,
> = ToolSpecFields<I, O, N> & ToolEffectDeclaration;

/**
 * Everything of a {@link ToolSpec} except its effect tier. `N` is the tool's name as a literal type (inferred by
 * {@link defineTool}), so a workflow's `proxyTools<typeof tools>()` knows each tool by name.
 */
export interface ToolSpecFields<
  I extends z.ZodType = z.ZodType,
  O extends z.ZodType = z.ZodType,
  N extends string = string,
> {
  /** Unique name; also the Temporal activity type. Letters, digits, `_` and `-`, at most 64. */
  name: N;
  /** When to use the tool and when not to: the model reads this. */
  description: string;
  input: I;
  output: O;
  /** Name of the tool that undoes this one. Required when `effect` is `compensable`. */
  undo?: string;
  /**
   * Whether a call waits for a human decision before it runs: `'never'`, `'always'`, or a predicate on the
   * validated arguments (run on the worker, e.g. `({ amountEur }) => amountEur > 500`). Default by effect
   * tier: `'always'` for irreversible tools and for untrusted tools that are not read-only, else `'never'`.
   * An irreversible tool that declares `'never'` must come after every compensable step of a run.
   */
  approval?: ToolApprovalPolicy<z.output<I>>;
  /** How long a call waits for a decision before it counts as rejected (default 24 h; a run may set its own). */
  approvalTimeout?: Duration;
  /** The tool comes from an untrusted source (an MCP server not marked trusted): see `approval`. */
  untrusted?: boolean;
  retry?: ToolRetryOptions;
  /** Start-to-close timeout of one attempt. */
  timeout?: Duration;
  /**
   * `'local'` runs each call as a Temporal local activity on the worker that runs the agent run: no round
   * trip through the server's task queues (a few ms instead of tens), but no heartbeats, retries decided
   * inside the workflow task, and a call that outlives its worker is retried from the last workflow task.
   * Allowed for read-only tools only; default `'activity'`. See docs/tools.md, "Local execution for read-only
   * tools". `'activity'` said explicitly also keeps the tool a regular activity in runs on the fast path
   * (docs/fast-path.md).
   */
  execution?: ToolExecution;
  /**
   * Output and argument budget: outputs above it are stored and the model sees a preview and a handle;
   * arguments above it are refused. Defaults: 16 KB / 4,000 tokens out, 256 KB in.
   */
  budget?: ToolBudgetOptions;
  /**
   * Limits of the argument guard for this tool's calls, over the worker's (`createWorker({ argumentGuard })`):
   * `maxDepth` (default 64, at most 256), `maxIssues` (10, at most 20), `maxIssueChars` (300, at most 1,000).
   */
  argumentGuard?: ArgumentGuardOptions;
  /**
   * Declares a long call (minutes to hours): heartbeat timeout, total deadline (also the default attempt
   * timeout and retry deadline), what cancellation means, largest checkpoint. The tool checkpoints with
   * `ctx.checkpoint(state)`, reports `ctx.progress(pct, message)`, and a retried attempt resumes from
   * `ctx.resumeFrom`. See docs/long-calls.md.
   */
  longCall?: ToolLongCallOptions;
  /**
   * At most `max` calls of this tool run at once across every worker of the task queue, per `key` (a function of
   * the validated arguments, e.g. per account) when given. A call past the limit waits, visibly, and its wait does
   * not count against its attempt timeout. See docs/limits.md, "Per-tool limits across workers".
   */
  concurrency?: ToolConcurrencyOptions<z.output<I>>;
  /** At most `perSecond` (or `perMinute`) calls start in any such window across every worker, per `key` when given. */
  rateLimit?: ToolRateLimitOptions<z.output<I>>;
  /**
   * The shared backoff: a 429 with Retry-After (or a storm of 503s) pauses every pending call of the tool (and key)
   * on every worker, then one call probes. Default: on when `concurrency` or `rateLimit` is declared; `true` turns
   * it on alone.
   */
  breaker?: boolean;
  /** How long one attempt may wait for its slot before it defers and waits again (default 60 s). */
  slotWait?: Duration;
  /**
   * Read-only tools only: answers are reused for `ttl` across runs and workers, from the idempotency store
   * (`key` picks what makes two calls the same read). See docs/tools.md, "Cached reads".
   */
  cache?: ToolCacheOptions<z.output<I>>;
}

/** The function that performs a tool call. It receives validated input and must return the output. */
export type ToolImplementation<I extends z.ZodType, O extends z.ZodType> = (
  input: z.output<I>,
  ctx: ToolContext,
) => Promise<z.input<O>>;

/** What a reconcile hook says about a call whose outcome is unknown. */
export type ReconcileResult<O> = { done: true; output: O } | { done: false };

/** Hooks an implementation may add next to its main function. */
export interface ToolImplementationHooks<O extends z.ZodType> {
  /**
   * Asks the downstream whether the call with this key took effect, after a crash left the outcome
   * unknown. Return `{ done: true, output }` to adopt that result, `{ done: false }` to run again.
   */
  reconcile?: (idempotencyKey: string, ctx: ToolContext) => Promise<ReconcileResult<z.input<O>>>;
}

/** A tool contract together with its implementation: what the worker registers. */
export interface Tool<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType, N extends string = string> {
  readonly contract: ToolContract<I, O, N>;
  readonly execute: ToolImplementation<I, O>;
  readonly hooks: ToolImplementationHooks<O>;
}

/** A validated {@link ToolSpec}, able to produce its catalog entry and to take an implementation. */
export interface ToolContract<
  I extends z.ZodType = z.ZodType,
  O extends z.ZodType = z.ZodType,
  N extends string = string,
> {
  readonly spec: Readonly<ToolSpec<I, O, N>>;
  readonly name: N;
  /** The JSON entry the workflow and the model see. */
  readonly catalogEntry: ToolCatalogEntry;
  implement(execute: ToolImplementation<I, O>, hooks?: ToolImplementationHooks<O>): Tool<I, O, N>;
}

/**
 * Declares a tool. Checks the declaration at once and throws a {@link ToolDefinitionError} when it is
 * inconsistent (bad name, compensable without undo, schemas that cannot become JSON Schema, ...).
 *
 * @example
 * ```ts
 * const bookFlight = defineTool({
 *   name: 'book_flight',
 *   description: 'Books a seat on a flight returned by search_flights. Do not use to look up prices.',
 *   input: z.object({ flightId: z.string(), passengers: z.number().int().min(1) }),
 *   output: z.object({ bookingId: z.string() }),
 *   effect: 'compensable',
 *   undo: 'cancel_flight',
 *   idempotent: true,
 * }).implement(async ({ flightId, passengers }, ctx) => airline.book(flightId, passengers, ctx.idempotencyKey));
 * ```
 */
export function defineTool<I extends z.ZodType, O extends z.ZodType, N extends string = string>(
  spec: ToolSpec<I, O, N>,
): ToolContract<I, O, N> {
  const catalogEntry = toCatalogEntry(spec);
  const contract: ToolContract<I, O, N> = {
    spec: Object.freeze({ ...spec }),
    name: spec.name,
    catalogEntry,
    implement(execute, hooks = {}) {
      if (typeof execute !== 'function') {
        throw new ToolDefinitionError(`Tool "${spec.name}": implement() needs a function.`, 'MISSING_IMPLEMENTATION');
      }
      return Object.freeze({ contract, execute, hooks: Object.freeze({ ...hooks }) });
    },
  };
  return Object.freeze(contract);
}

function toCatalogEntry<I extends z.ZodType, O extends z.ZodType>(spec: ToolSpec<I, O>): ToolCatalogEntry {
  const name = spec.name;
  if (typeof name !== 'string' || !TOOL_NAME_PATTERN.test(name)) {
    throw new ToolDefinitionError(
      `Tool name ${JSON.stringify(name)} is invalid: use 1-64 letters, digits, "_" or "-".`,
      'INVALID_NAME',
    );
  }
  checkNotReserved(name);
  if (!spec.description || spec.description.trim().length === 0) {
    throw new ToolDefinitionError(`Tool "${name}" needs a description the model can read.`, 'MISSING_DESCRIPTION');
  }
  if (!(spec.input instanceof z.ZodType) || !(spec.output instanceof z.ZodType)) {
    throw new ToolDefinitionError(`Tool "${name}": input and output must be zod schemas.`, 'INVALID_SCHEMA');
  }
  if (!['read-only', 'compensable', 'irreversible'].includes(spec.effect)) {
    throw new ToolDefinitionError(
      `Tool "${name}": effect must be "read-only", "compensable" or "irreversible" (got ${JSON.stringify(spec.effect) ?? 'nothing'}).`,
      'INVALID_EFFECT',
    );
  }
  checkUndoIsAnotherTool(name, spec.undo);
  checkIdempotent(name, spec.idempotent, spec.effect);
  checkApproval(name, spec.approval);
  if (spec.effect === 'compensable' && !spec.undo) {
    throw new ToolDefinitionError(`Tool "${name}" is compensable but names no undo tool.`, 'MISSING_UNDO');
  }
  if (spec.effect !== 'compensable' && spec.undo) {
    throw new ToolDefinitionError(
      `Tool "${name}" names an undo tool but its effect is "${spec.effect}".`,
      'INVALID_EFFECT',
    );
  }
  const local = checkExecution(name, spec.execution, spec.effect);
  const cache = resolveToolCache(name, spec.cache, spec.effect);
  checkArgumentGuardOptions(
    spec.argumentGuard,
    `Tool "${name}": argumentGuard`,
    (message) => new ToolDefinitionError(message, 'INVALID_ARGUMENT_GUARD'),
  );
  const longCall = resolveLongCall(name, spec.longCall);
  if (longCall && local) {
    throw new ToolDefinitionError(
      `Tool "${name}" declares both longCall and execution "local": a local activity cannot heartbeat or checkpoint.`,
      'INVALID_OPTION',
    );
  }
  const limits = resolveToolLimits(
    name,
    {
      concurrency: spec.concurrency,
      rateLimit: spec.rateLimit,
      breaker: spec.breaker,
      slotWait: spec.slotWait,
    } as never,
    local,
  );
  const retry = resolveRetry(name, spec.retry as Record<string, unknown> | undefined);
  // A long call's deadline is its attempt timeout and its retry deadline unless it sets them itself.
  if (longCall && spec.retry?.totalDeadline === undefined) retry.totalDeadlineMs = longCall.deadlineMs;
  const timeoutMs = spec.timeout === undefined && longCall ? longCall.deadlineMs : resolveTimeout(name, spec.timeout);
  const approval = spec.approval as ToolApprovalPolicy<never> | undefined;
  const approvalTimeoutMs =
    spec.approvalTimeout === undefined ? undefined : durationMs(name, 'approvalTimeout', spec.approvalTimeout, 0);
  return {
    name,
    description: spec.description,
    inputSchema: toJsonSchema(name, spec.input, 'input'),
    outputSchema: toJsonSchema(name, spec.output, 'output'),
    effect: spec.effect,
    idempotent: spec.idempotent ?? spec.effect === 'read-only',
    ...(spec.undo ? { undo: spec.undo } : {}),
    approval: catalogApproval(approval, { effect: spec.effect, untrusted: spec.untrusted === true }),
    ...(approvalTimeoutMs !== undefined ? { approvalTimeoutMs } : {}),
    ...(spec.untrusted === true ? { untrusted: true } : {}),
    retry,
    timeoutMs,
    ...(local
      ? { execution: 'local' as const }
      : spec.execution === 'activity'
        ? { execution: 'activity' as const }
        : {}),
    ...(longCall ? { longCall } : {}),
    budget: resolveToolBudget(name, spec.budget),
    ...(limits ? { limits: limits.settings } : {}),
    ...(cache ? { cache } : {}),
  };
}

/** True for `execution: 'local'`, which only read-only tools may declare. */
function checkExecution(name: string, execution: unknown, effect: ToolEffect): boolean {
  if (execution === undefined || execution === 'activity') return false;
  if (execution !== 'local') {
    throw new ToolDefinitionError(
      `Tool "${name}": execution must be "activity" or "local" (got ${JSON.stringify(execution)}).`,
      'INVALID_OPTION',
    );
  }
  if (effect !== 'read-only') {
    throw new ToolDefinitionError(
      `Tool "${name}" declares execution "local" but its effect is "${effect}": only read-only tools may run as local activities (no idempotency key store, no heartbeats).`,
      'INVALID_OPTION',
    );
  }
  return true;
}

function toJsonSchema(name: string, schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  try {
    return z.toJSONSchema(schema, { io, unrepresentable: 'throw' }) as Record<string, unknown>;
  } catch (cause) {
    throw new ToolDefinitionError(
      `Tool "${name}": the ${io} schema cannot be expressed as JSON Schema (${(cause as Error).message}).`,
      'INVALID_SCHEMA',
      { cause },
    );
  }
}
