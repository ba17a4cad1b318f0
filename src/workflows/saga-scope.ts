import { ApplicationFailure, AsyncLocalStorage, CancellationScope, ContinueAsNew } from '@temporalio/workflow';
import type { PendingCompensation } from '../contract/agent-run-types';
import { describeActivityFailure } from '../contract/activity-protocol';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { compensateOne } from './saga';

/** The `type` of the failure {@link withSaga} throws when a compensation itself failed permanently. */
export const SAGA_COMPENSATION_FAILED = 'COMPENSATION_FAILED';

/** Options of {@link withSaga}. */
export interface SagaOptions {
  /** Run the compensations all at once instead of one by one, newest first (default false). */
  parallel?: boolean;
}

/** What the function given to {@link withSaga} may add to its saga. */
export interface Saga {
  /**
   * Registers an undo of your own (a step that is not a tool call, e.g. an activity of yours). Register it BEFORE
   * the step it undoes, as the engine does for tools: a step that timed out may still have had its effect.
   * `name` says what it undoes, in the failure a compensation failure throws.
   */
  add(undo: () => Promise<unknown>, name?: string): void;
}

/** One compensation a saga owes. */
type Owed =
  | { kind: 'tool'; item: PendingCompensation; undo: ToolCatalogEntry | undefined; runKey: string }
  | { kind: 'own'; run: () => Promise<unknown>; name: string };

/** What a failed compensation reports. */
export interface FailedCompensation {
  /** What was being undone: the forward tool's name (and its key), or the name given to `saga.add`. */
  of: string;
  error: string;
}

/** The `details[0]` of a {@link SAGA_COMPENSATION_FAILED} failure. */
export interface SagaCompensationReport {
  compensated: number;
  failed: FailedCompensation[];
}

/** A saga scope: the compensations owed, oldest first. */
class SagaScope implements Saga {
  readonly owed: Owed[] = [];

  add(undo: () => Promise<unknown>, name?: string): void {
    if (typeof undo !== 'function') throw new TypeError('saga.add needs a function that undoes a step.');
    this.owed.push({ kind: 'own', run: undo, name: name ?? `undo ${this.owed.length + 1}` });
  }
}

const sagas = new AsyncLocalStorage<SagaScope>();

/** A tool call's compensation, registered in the current saga before the call runs. */
export interface OwedToolCompensation {
  /** The forward call returned: the undo tool also gets its output. */
  setOutput(output: unknown): void;
  /** The forward call provably had no effect: nothing to undo. */
  drop(): void;
}

/**
 * Registers a tool call's compensation in the saga the call runs in (none outside a saga). Called by the
 * tool call before it schedules anything.
 */
export function oweToolCompensation(
  item: PendingCompensation,
  undo: ToolCatalogEntry | undefined,
  runKey: string,
): OwedToolCompensation | undefined {
  const saga = sagas.getStore();
  if (!saga) return undefined;
  const owed: Owed = { kind: 'tool', item, undo, runKey };
  saga.owed.push(owed);
  return {
    setOutput: (output) => {
      item.output = output;
    },
    drop: () => {
      const index = saga.owed.indexOf(owed);
      if (index >= 0) saga.owed.splice(index, 1);
    },
  };
}

/**
 * Runs `fn` as a saga. Each tool call made inside it (`callTool`, `proxyTools`, in `fn` or in any function it
 * awaits) whose tool declares an undo tool registers its compensation BEFORE the call runs (the undo tool gets
 * `{ originalInput, originalOutput?, originalKey }` under the key `${key}/undo`, as in an agent run); the
 * compensation is dropped only when the call provably had no effect. `saga.add(undo)` registers undos of your
 * own. When `fn` throws, or the workflow is cancelled, the compensations run newest first inside
 * `CancellationScope.nonCancellable`, and the error is rethrown. A compensation that fails permanently does not
 * stop the others; the saga then throws an `ApplicationFailure` of type {@link SAGA_COMPENSATION_FAILED}
 * (details: a {@link SagaCompensationReport}, cause: the original error) instead.
 *
 * The scope follows the code through `await` (Temporal's workflow `AsyncLocalStorage`, as `CancellationScope`
 * does): no saga object has to reach the tool calls. A saga inside a saga hands what it owes to the outer one
 * when it succeeds. Continuing as new inside a saga ends it without compensating (the next run owes nothing).
 *
 * @example
 * ```ts
 * await withSaga(async () => {
 *   const room = await tools.reserve_room({ hotel, nights });   // undone by cancel_room if a later step fails
 *   await tools.charge_card({ amount: room.price });
 *   await tools.send_notice({ to: guest, text: `Booked ${room.id}` });
 * });
 * ```
 */
export async function withSaga<T>(fn: (saga: Saga) => Promise<T>, options: SagaOptions = {}): Promise<T> {
  const saga = new SagaScope();
  let result: T;
  try {
    result = await sagas.run(saga, () => fn(saga));
  } catch (error) {
    if (error instanceof ContinueAsNew) throw error;
    const report = await compensate(saga.owed, options);
    if (report.failed.length > 0) throw compensationFailed(error, report);
    throw error;
  }
  // A saga inside a saga: the outer one undoes these too when it fails later.
  sagas.getStore()?.owed.push(...saga.owed);
  return result;
}

/** Runs what a saga owes, newest first (or all at once), in a non-cancellable scope; failures are collected. */
async function compensate(owed: readonly Owed[], options: SagaOptions): Promise<SagaCompensationReport> {
  const report: SagaCompensationReport = { compensated: 0, failed: [] };
  const runOne = async (item: Owed): Promise<void> => {
    try {
      if (item.kind === 'own') await item.run();
      else await compensateOne(item.item, item.undo, { keyPrefix: item.runKey, runKey: item.runKey }, false);
      report.compensated += 1;
    } catch (error) {
      report.failed.push({
        of: item.kind === 'own' ? item.name : `${item.item.tool} (${item.item.idempotencyKey})`,
        error: describeActivityFailure(error),
      });
    }
  };
  const newestFirst = [...owed].reverse();
  await CancellationScope.nonCancellable(async () => {
    if (options.parallel) await Promise.all(newestFirst.map(runOne));
    else for (const item of newestFirst) await runOne(item);
  });
  return report;
}

function compensationFailed(error: unknown, report: SagaCompensationReport): ApplicationFailure {
  const what = report.failed.map((f) => `${f.of}: ${f.error}`).join('; ');
  const why = error instanceof Error ? error.message : String(error);
  return ApplicationFailure.create({
    type: SAGA_COMPENSATION_FAILED,
    message: `The saga failed (${why}) and ${report.failed.length} compensation(s) failed too: ${what}`.slice(0, 4000),
    nonRetryable: true,
    details: [report],
    ...(error instanceof Error ? { cause: error } : {}),
  });
}
