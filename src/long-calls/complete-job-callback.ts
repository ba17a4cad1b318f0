/**
 * Turns a downstream's callback into the completion of the waiting tool call (Temporal's async activity
 * completion by task token), after the checks the tool wrapper would have made: the token is the call's,
 * the call still waits, the output matches the tool's output schema and fits its budget.
 */
import { ActivityNotFoundError, type Client } from '@temporalio/client';
import type { ToolActivityResult } from '../contract/tool-activity-types';
import { boundToolOutput, type PayloadStore } from '../stores/transcripts/claim-check';
import { nestsDeeperThan, OUTPUT_MAX_DEPTH } from '../guard/json-arguments';
import type { Tool } from '../tools/define-tool';
import { budgetOf } from '../contract/tool-budget';
import { createToolRegistry, type ToolRegistry } from '../tools/tool-registry';
import { parseCallbackToken, readJobRecord, secretMatches, writeJobRecord, type JobRecord } from './job-record';
import { JobCallbackError } from './job-callback-error';

/** What {@link completeJobCallback} needs: the worker's client, transcript store and tools. */
export interface JobCallbackDeps {
  /** A client of the namespace the runs are in (with the worker's data converter when payloads are encrypted). */
  client: Client;
  /** The worker's transcript store (shared: SQLite on one machine, Postgres beyond), where job records live. */
  store: PayloadStore;
  /** The async-job tools (or the worker's registry): their output schemas and budgets are checked here. */
  tools: readonly Tool[] | ToolRegistry;
  /**
   * How long a callback that comes before the attempt waits for it (a downstream calling back while `submit`
   * is still returning) waits for the attempt to record its task token (default 10 s), in ms.
   */
  waitForAttemptMs?: number;
}

/** Default of {@link JobCallbackDeps.waitForAttemptMs}, and how often the record is read meanwhile. */
export const JOB_CALLBACK_WAIT = { forAttemptMs: 10_000, intervalMs: 100 } as const;

/** A callback that completed its call. */
export interface JobCallbackResult {
  status: 'completed';
  tool: string;
  runId: string;
  idempotencyKey: string;
  jobId?: string;
}

/** Most problems listed for an invalid output. */
const MAX_ISSUES = 10;

/**
 * Completes the tool call waiting for `callbackToken` with `output` (the job's result, as the tool's output
 * schema describes it). The output is validated and bounded like any tool output; the call's job record
 * (under its idempotency key) is marked done, so a repeated callback is refused and nothing is submitted
 * again. The call's step then succeeds with this output; the agent run goes on.
 *
 * @throws {@link JobCallbackError} with one of its codes (job-callback-error.ts); nothing changed then.
 *
 * @example
 * ```ts
 * await completeJobCallback({ client, store: transcripts, tools }, req.params.token, req.body);
 * ```
 */
export async function completeJobCallback(
  deps: JobCallbackDeps,
  callbackToken: unknown,
  output: unknown,
): Promise<JobCallbackResult> {
  const record = await waitingRecord(deps.store, callbackToken);
  const registry = 'catalog' in deps.tools ? deps.tools : createToolRegistry(deps.tools as readonly Tool[]);
  const tool = registry.get(record.tool);
  if (!tool?.contract.catalogEntry.asyncJob) {
    throw new JobCallbackError(
      `The call's tool "${record.tool}" is not an async-job tool given to the callback helper.`,
      'UNKNOWN_TOOL',
    );
  }
  const result = await checkedResult(tool, record, output, deps.store);
  await completeByToken(deps, record, result);
  const done: JobRecord = { ...record, status: 'done', completedAt: Date.now() };
  delete done.taskToken;
  // The call is complete whatever happens now; a failed write only lets a repeated callback get NOT_WAITING.
  await writeJobRecord(deps.store, done).catch(() => undefined);
  return {
    status: 'completed',
    tool: record.tool,
    runId: record.runId,
    idempotencyKey: record.idempotencyKey,
    ...(record.jobId !== undefined ? { jobId: record.jobId } : {}),
  };
}

/** The job record the token names, checked: the secret matches and the call is not finished. */
async function waitingRecord(store: PayloadStore, callbackToken: unknown): Promise<JobRecord> {
  const parsed = parseCallbackToken(callbackToken);
  const invalid = () => new JobCallbackError('No tool call has this callback token.', 'INVALID_TOKEN');
  if (!parsed) throw invalid();
  const record = await readRecord(store, parsed.idempotencyKey);
  if (!record || !secretMatches(record, parsed.secret)) throw invalid();
  if (record.status === 'done') {
    throw new JobCallbackError('The call was already completed by a callback.', 'ALREADY_FINISHED');
  }
  return record;
}

async function readRecord(store: PayloadStore, key: string): Promise<JobRecord | undefined> {
  try {
    return await readJobRecord(store, key);
  } catch (cause) {
    throw new JobCallbackError(`The job record could not be read: ${String(cause)}`, 'UNAVAILABLE', [], { cause });
  }
}

/** The activity result for `output`: validated against the tool's schema and bounded by its budget. */
async function checkedResult(
  tool: Tool,
  record: JobRecord,
  output: unknown,
  store: PayloadStore,
): Promise<ToolActivityResult> {
  const entry = tool.contract.catalogEntry;
  const parsed = tool.contract.spec.output.safeParse(output);
  if (!parsed.success || nestsDeeperThan(parsed.data, OUTPUT_MAX_DEPTH)) {
    const issues = (parsed.success ? [] : parsed.error.issues).slice(0, MAX_ISSUES).map((issue) => ({
      path: issue.path.map(String).join('.') || '(root)',
      message: issue.message.slice(0, 300),
    }));
    throw new JobCallbackError(
      parsed.success
        ? `The output nests deeper than ${OUTPUT_MAX_DEPTH} levels.`
        : `The output does not match the output schema of "${entry.name}" (${parsed.error.issues.length} problem${parsed.error.issues.length === 1 ? '' : 's'}).`,
      'INVALID_OUTPUT',
      issues,
    );
  }
  try {
    const bounded = await boundToolOutput(parsed.data, store, {
      budget: budgetOf(entry),
      idempotencyKey: record.idempotencyKey,
      runId: record.runId,
      compensable: entry.undo !== undefined,
    });
    return { output: bounded, attempt: record.attempt ?? 1 };
  } catch (cause) {
    throw new JobCallbackError(`The output could not be stored: ${String(cause)}`, 'UNAVAILABLE', [], { cause });
  }
}

/**
 * Completes the waiting attempt by its task token. When that attempt is gone, the record is read again: a
 * newer attempt that waits has written its own token (tried once more); otherwise no attempt waits.
 */
async function completeByToken(deps: JobCallbackDeps, first: JobRecord, result: ToolActivityResult): Promise<void> {
  let record = first.taskToken === undefined ? await attemptWaiting(deps, first) : first;
  for (let round = 0; round < 2; round += 1) {
    if (record.taskToken === undefined) break;
    try {
      await deps.client.activity.complete(Buffer.from(record.taskToken, 'base64'), result);
      return;
    } catch (error) {
      if (!(error instanceof ActivityNotFoundError)) {
        throw new JobCallbackError(`The call could not be completed: ${String(error)}`, 'UNAVAILABLE', [], {
          cause: error,
        });
      }
    }
    const again = await readRecord(deps.store, record.idempotencyKey);
    if (again?.status === 'done') {
      throw new JobCallbackError('The call was already completed by a callback.', 'ALREADY_FINISHED');
    }
    if (!again || again.taskToken === record.taskToken) break;
    record = again;
  }
  throw new JobCallbackError(
    'No attempt of the call waits for a callback now (it timed out, was cancelled, or is about to be retried).',
    'NOT_WAITING',
  );
}

/** The record once an attempt waits (its task token recorded), or as it is after `waitForAttemptMs`. */
async function attemptWaiting(deps: JobCallbackDeps, record: JobRecord): Promise<JobRecord> {
  const deadline = Date.now() + (deps.waitForAttemptMs ?? JOB_CALLBACK_WAIT.forAttemptMs);
  let current = record;
  while (current.taskToken === undefined && current.status !== 'done' && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, JOB_CALLBACK_WAIT.intervalMs));
    current = (await readRecord(deps.store, record.idempotencyKey)) ?? current;
  }
  if (current.status === 'done') {
    throw new JobCallbackError('The call was already completed by a callback.', 'ALREADY_FINISHED');
  }
  return current;
}
