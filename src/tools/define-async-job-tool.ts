import type { z } from 'zod';
import type { Duration } from '@temporalio/common';
import {
  defineTool,
  type Tool,
  type ToolContract,
  type ToolEffectDeclaration,
  type ToolSpec,
  type ToolSpecFields,
} from './define-tool';
import { resolveAsyncJob, temporalDeadlineMs, type ToolAsyncJobOptions } from './async-job';
import type { ToolContext } from './tool-context';
import type { ToolAsyncJobSettings, ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { ToolDefinitionError } from '../contract/tool-definition-error';

/** What `submit` returns: the downstream's id of the job it accepted. */
export interface AsyncJobSubmission {
  /** The downstream's job id (1 to 1,000 characters): what `poll` asks about. */
  jobId: string;
}

/** What `submit` receives besides the validated input. */
export interface AsyncJobSubmitContext extends ToolContext {
  /**
   * Opaque token of this call's callback, the same for every attempt: hand it to the downstream (e.g. in a
   * callback URL `https://you/callbacks/${callbackToken}`), which gives it back with the result to
   * `completeJobCallback` or the callback endpoint. Unguessable: it carries a random secret of the call.
   */
  callbackToken: string;
}

/** What one `poll` found: the result, or how far the job is. */
export type AsyncJobPollResult<O> = { done: true; output: O } | { done: false; percent?: number; message?: string };

/** The functions of an async-job tool. */
export interface AsyncJobHandlers<I extends z.ZodType, O extends z.ZodType> {
  /**
   * Submits the job: the call's effect, run under its idempotency key (send `ctx.idempotencyKey` downstream).
   * Runs once per call: the job id is recorded before any waiting, and a retried attempt waits for that job.
   */
  submit(input: z.output<I>, ctx: AsyncJobSubmitContext): Promise<AsyncJobSubmission>;
  /**
   * Asks the downstream about the job (completion `'poll'` only; required then). Throw a
   * `PermanentToolError` when the job failed; any other error ends the attempt and the next one polls again.
   */
  poll?(job: AsyncJobSubmission, ctx: ToolContext): Promise<AsyncJobPollResult<z.input<O>>>;
}

/** A tool spec whose downstream works asynchronously. */
export type AsyncJobToolSpec<
  I extends z.ZodType = z.ZodType,
  O extends z.ZodType = z.ZodType,
  N extends string = string,
> = Omit<ToolSpecFields<I, O, N>, 'longCall' | 'execution' | 'timeout'> & ToolEffectDeclaration & AsyncJobToolFields;

/** The fields an {@link AsyncJobToolSpec} adds to a tool's. */
export interface AsyncJobToolFields {
  asyncJob: ToolAsyncJobOptions;
  /**
   * How long a submission or a poll may go silent before the attempt counts as dead (default 30 s). A call
   * waiting for its callback has no worker and no heartbeat timeout.
   */
  heartbeatTimeout?: Duration;
}

/** A validated {@link AsyncJobToolSpec}, able to take its {@link AsyncJobHandlers}. */
export interface AsyncJobToolContract<
  I extends z.ZodType = z.ZodType,
  O extends z.ZodType = z.ZodType,
  N extends string = string,
> {
  readonly name: N;
  readonly catalogEntry: ToolCatalogEntry;
  implement(handlers: AsyncJobHandlers<I, O>): Tool<I, O, N>;
}

/** Where the engine finds an async-job tool's handlers (the tool's `execute` only says it needs the engine). */
const ASYNC_JOB_RUNTIME = Symbol.for('durable-tools.async-job');

/** The handlers and settings of an async-job tool, as the tool activities bind them. */
export interface AsyncJobRuntime {
  handlers: AsyncJobHandlers<z.ZodType, z.ZodType>;
  settings: ToolAsyncJobSettings;
}

/**
 * Declares a tool whose downstream works asynchronously: `submit` starts a job (the effect, under the
 * idempotency key), and its result comes by callback (`completion: 'callback'`, see `completeJobCallback`) or
 * by polling (`'poll'`, with backoff and a deadline). With `fetchLater` the model may start it in the
 * background and fetch the result later with the built-in `fetch_tool_result`. See docs/long-calls.md.
 *
 * @example
 * ```ts
 * const render = defineAsyncJobTool({
 *   name: 'render_video', description: 'Renders a video. Takes minutes.',
 *   input: z.object({ scene: z.string() }), output: z.object({ url: z.string() }),
 *   effect: 'irreversible', idempotent: true, approval: 'never',
 *   asyncJob: { completion: 'callback', deadline: '2h', fetchLater: true },
 * }).implement({
 *   submit: async ({ scene }, ctx) => renderer.submit(scene, { key: ctx.idempotencyKey, callback: `${base}/callbacks/${ctx.callbackToken}` }),
 * });
 * ```
 */
export function defineAsyncJobTool<I extends z.ZodType, O extends z.ZodType, N extends string = string>(
  spec: AsyncJobToolSpec<I, O, N>,
): AsyncJobToolContract<I, O, N> {
  const { asyncJob, heartbeatTimeout, ...rest } = spec;
  const settings = resolveAsyncJob(spec.name, asyncJob);
  const base = defineTool<I, O, N>({
    ...rest,
    longCall: {
      deadline: temporalDeadlineMs(settings),
      ...(heartbeatTimeout !== undefined ? { heartbeatTimeout } : {}),
    },
  } as ToolSpec<I, O, N>);
  const catalogEntry: ToolCatalogEntry = Object.freeze({ ...base.catalogEntry, asyncJob: settings });
  const contract: ToolContract<I, O, N> = Object.freeze({
    spec: base.spec,
    name: base.name,
    catalogEntry,
    implement() {
      throw new ToolDefinitionError(
        `Tool "${base.name}" is an async-job tool: implement it with defineAsyncJobTool(...).implement({ submit, poll }).`,
        'INVALID_OPTION',
      );
    },
  });
  return Object.freeze({
    name: base.name,
    catalogEntry,
    implement(handlers: AsyncJobHandlers<I, O>): Tool<I, O, N> {
      checkHandlers(base.name, settings, handlers);
      const runtime: AsyncJobRuntime = { handlers: handlers as AsyncJobRuntime['handlers'], settings };
      const execute = () =>
        Promise.reject(new Error(`Tool "${base.name}" is an async-job tool: it runs only in the engine's worker.`));
      return Object.freeze({ contract, execute, hooks: Object.freeze({}), [ASYNC_JOB_RUNTIME]: runtime });
    },
  });
}

/** The async-job runtime of a tool, or undefined for any other tool. */
export function asyncJobRuntimeOf(tool: Tool): AsyncJobRuntime | undefined {
  return (tool as unknown as Record<symbol, AsyncJobRuntime | undefined>)[ASYNC_JOB_RUNTIME];
}

function checkHandlers(name: string, settings: ToolAsyncJobSettings, handlers: unknown): void {
  const given = (handlers ?? {}) as Partial<AsyncJobHandlers<z.ZodType, z.ZodType>>;
  if (typeof given.submit !== 'function') {
    throw new ToolDefinitionError(`Tool "${name}": implement() needs a submit function.`, 'MISSING_IMPLEMENTATION');
  }
  if (settings.completion === 'poll' && typeof given.poll !== 'function') {
    throw new ToolDefinitionError(
      `Tool "${name}" declares completion "poll": implement() needs a poll function.`,
      'MISSING_IMPLEMENTATION',
    );
  }
}
