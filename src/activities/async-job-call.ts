/**
 * The body of an async-job tool call, run inside the tool wrapper (which has claimed the idempotency key):
 * submit the job once, record its handle before any waiting, then wait for a callback (async activity
 * completion) or poll the downstream with jittered backoff until the job's deadline.
 */
import { Context } from '@temporalio/activity';
import { CompleteAsyncError } from '@temporalio/common';
import type { z } from 'zod';
import type { PayloadStore } from '../stores/transcripts/claim-check';
import { callbackTokenOf, newJobRecord, readJobRecord, writeJobRecord, type JobRecord } from '../long-calls/job-record';
import { computeBackoffDelay } from '../failures/backoff';
import { asyncJobRuntimeOf, type AsyncJobRuntime, type AsyncJobSubmission } from '../tools/define-async-job-tool';
import type { Tool } from '../tools/define-tool';
import type { ToolContext } from '../tools/tool-context';
import { PermanentToolError, TransientToolError } from '../failures/tool-errors';
import { TOOL_ERROR_CODES } from '../contract/activity-protocol';

/** Longest job id a downstream may return. */
const MAX_JOB_ID_CHARS = 1_000;

/**
 * The tool with its async-job body bound to the worker's transcript store (where job records live); any
 * other tool as it is. `createToolActivities` binds every tool it registers.
 */
export function bindAsyncJob(tool: Tool, store: PayloadStore): Tool {
  const runtime = asyncJobRuntimeOf(tool);
  if (!runtime) return tool;
  return Object.freeze({
    ...tool,
    execute: (input: unknown, ctx: ToolContext) => runAsyncJob(tool, runtime, input, ctx, store),
  });
}

/** Whether an error thrown by a tool means "the call completes later, by task token". */
export function isAsyncCompletion(error: unknown): boolean {
  return error instanceof CompleteAsyncError;
}

async function runAsyncJob(
  tool: Tool,
  runtime: AsyncJobRuntime,
  input: unknown,
  ctx: ToolContext,
  store: PayloadStore,
): Promise<unknown> {
  const job = await submittedJob(tool, runtime, input, ctx, store);
  if (runtime.settings.completion === 'poll') return pollJob(runtime, job, ctx);
  return awaitCallback(job, ctx, store);
}

/** The job of this call: the one an earlier attempt submitted, or a new submission recorded before returning. */
async function submittedJob(
  tool: Tool,
  runtime: AsyncJobRuntime,
  input: unknown,
  ctx: ToolContext,
  store: PayloadStore,
): Promise<JobRecord & { jobId: string; submittedAt: number }> {
  const key = ctx.idempotencyKey;
  const record =
    (await storeStep(() => readJobRecord(store, key, ctx.runKey ?? ctx.runId))) ??
    newJobRecord(tool.contract.name, key, ctx.runKey ?? ctx.runId, runtime.settings.deadlineMs);
  if (record.status !== 'submitting' && record.jobId !== undefined && record.submittedAt !== undefined) {
    ctx.log.info('The job of this call was submitted by an earlier attempt; not submitting again.', {
      key,
      jobId: record.jobId,
    });
    return record as JobRecord & { jobId: string; submittedAt: number };
  }
  // A submission an earlier attempt checkpointed but could not record: adopt it, never submit twice.
  const checkpointed = checkpointedJob(ctx.resumeFrom);
  if (checkpointed) return recordSubmitted(record, checkpointed, store);
  // The record (and its secret) exists before the downstream hears of the call, so the callback token is stable.
  if (record.status === 'submitting') await storeStep(() => writeJobRecord(store, record));
  ctx.assertLease();
  const submission = await runtime.handlers.submit(input as z.output<z.ZodType>, {
    ...ctx,
    callbackToken: callbackTokenOf(record),
  });
  const jobId = checkJobId(tool.contract.name, submission);
  const submittedAt = Date.now();
  // Heartbeat details and the transcript store: the next attempt sees the job even if the record below fails.
  await ctx.checkpoint({ jobId, submittedAt });
  ctx.progress(0, `job ${jobId} submitted`);
  return recordSubmitted(record, { jobId, submittedAt }, store);
}

async function recordSubmitted(
  record: JobRecord,
  job: { jobId: string; submittedAt: number },
  store: PayloadStore,
): Promise<JobRecord & { jobId: string; submittedAt: number }> {
  const submitted = { ...record, status: 'submitted' as const, ...job };
  await storeStep(() => writeJobRecord(store, submitted));
  return submitted;
}

/**
 * Records which attempt waits (its task token) and ends the activity function: the call stays open on the
 * server until `completeJobCallback` completes it by that token, or its deadline passes.
 */
async function awaitCallback(record: JobRecord, ctx: ToolContext, store: PayloadStore): Promise<never> {
  const info = Context.current().info;
  const waiting: JobRecord = {
    ...record,
    taskToken: Buffer.from(info.taskToken).toString('base64'),
    attempt: info.attempt,
  };
  await storeStep(() => writeJobRecord(store, waiting));
  ctx.log.info('Waiting for the job callback.', { key: ctx.idempotencyKey, jobId: record.jobId });
  throw new CompleteAsyncError();
}

/** Polls until the job is done, with decorrelated jitter between polls, until the job's deadline. */
async function pollJob(
  runtime: AsyncJobRuntime,
  job: { jobId: string; submittedAt: number },
  ctx: ToolContext,
): Promise<unknown> {
  const { pollIntervalMs, maxPollIntervalMs, deadlineMs } = runtime.settings;
  const deadlineAt = job.submittedAt + deadlineMs;
  const poll = runtime.handlers.poll!;
  let delayMs = pollIntervalMs;
  for (let polls = 1; ; polls += 1) {
    const found = await poll({ jobId: job.jobId }, ctx);
    ctx.heartbeat();
    if (found.done) return found.output;
    ctx.progress(
      typeof found.percent === 'number' ? found.percent : 0,
      found.message ?? `poll ${polls}: job ${job.jobId} running`,
    );
    delayMs = Math.round(
      computeBackoffDelay({
        attempt: polls,
        initialDelayMs: pollIntervalMs,
        maxDelayMs: maxPollIntervalMs,
        jitter: 'decorrelated',
        previousDelayMs: delayMs,
      }),
    );
    if (Date.now() + delayMs > deadlineAt) {
      throw new PermanentToolError(
        `Job ${job.jobId} did not finish within the tool's deadline (${deadlineMs} ms after it was submitted; ${polls} polls).`,
        {
          code: TOOL_ERROR_CODES.TIMEOUT,
          hint: 'The job may still finish downstream; do not submit it again in this run.',
          mayHaveHadEffect: true,
        },
      );
    }
    await sleep(delayMs, ctx.signal);
  }
}

function checkpointedJob(resumeFrom: unknown): { jobId: string; submittedAt: number } | undefined {
  if (resumeFrom === null || typeof resumeFrom !== 'object') return undefined;
  const { jobId, submittedAt } = resumeFrom as { jobId?: unknown; submittedAt?: unknown };
  return typeof jobId === 'string' && typeof submittedAt === 'number' ? { jobId, submittedAt } : undefined;
}

function checkJobId(tool: string, submission: AsyncJobSubmission | undefined): string {
  const jobId = submission?.jobId;
  if (typeof jobId !== 'string' || jobId.length === 0 || jobId.length > MAX_JOB_ID_CHARS) {
    // The downstream may have accepted a job: a fault of the tool, never retried blindly.
    throw new PermanentToolError(
      `Tool "${tool}": submit returned ${JSON.stringify(jobId) ?? 'nothing'} as the job id (a string of 1 to ${MAX_JOB_ID_CHARS} characters is needed).`,
      {
        code: TOOL_ERROR_CODES.INVALID_OUTPUT,
        hint: 'This is a fault of the tool, not of your call. Do not repeat the call.',
        mayHaveHadEffect: true,
      },
    );
  }
  return jobId;
}

/** A transcript-store step: an outage is transient (the next attempt reads the record again). */
async function storeStep<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (cause) {
    throw new TransientToolError(
      `The job record could not be read or written: ${cause instanceof Error ? cause.message : String(cause)}`,
      { code: TOOL_ERROR_CODES.UNAVAILABLE, cause, mayHaveHadEffect: true },
    );
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
