import { CancellationScope, condition } from '@temporalio/workflow';
import type { ModelToolCall } from '../contract/model-types';
import { TOOL_ERROR_CODES, type ToolErrorObservation } from '../contract/activity-protocol';
import {
  backgroundHandle,
  FETCH_TOOL_RESULT_TOOL,
  offersFetchLater,
  parseFetchArguments,
  type BackgroundCallStatus,
} from '../contract/fetch-tool-result';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import type { StepRecord } from '../contract/agent-run-types';
import { stepKey } from './run-ownership';
import type { BackgroundCallsOnFinish, RunBackground, StepContext } from './run-types';
import { runToolStep } from './tool-step';
import { compensate, type CompensationOutcome } from './saga';

export type { BackgroundCallsOnFinish } from './run-types';

/** One call running in the background: its step (filled in by `runToolStep`) and its own scope. */
interface BackgroundCall {
  handle: string;
  record: StepRecord;
  scope: CancellationScope;
  settled: Promise<void>;
  done: boolean;
  /** Whether the run's failure policy has seen how it ended. */
  reported: boolean;
}

/**
 * The background calls of a run (fetch-later tools, `asyncJob.fetchLater`). Such a call is a step like any
 * other (its compensation registered before it starts, its record in the run state), run in its own
 * cancellation scope; the model gets a handle at once and `fetch_tool_result` answers from the step record.
 * A run with no fetch-later tool never gets here, so its commands do not change.
 */
export class BackgroundCalls implements RunBackground {
  private readonly calls = new Map<string, BackgroundCall>();
  private readonly enabled: boolean;

  constructor(private readonly step: StepContext) {
    const visible: ToolCatalogEntry[] = [];
    for (const name of step.visible) {
      const entry = step.catalog.get(name);
      if (entry) visible.push(entry);
    }
    this.enabled = offersFetchLater(visible);
  }

  /** Calls still running. */
  get outstanding(): number {
    let running = 0;
    for (const call of this.calls.values()) if (!call.done) running += 1;
    return running;
  }

  /** Whether this call is for the background machinery: a fetch-later tool, or `fetch_tool_result`. */
  handles(call: ModelToolCall): boolean {
    if (!this.enabled) return false;
    const name = call?.name;
    if (name === FETCH_TOOL_RESULT_TOOL) return true;
    return typeof name === 'string' && this.step.visible.has(name) && this.fetchLater(name);
  }

  /** Runs the call: a fetch-later tool starts in the background, `fetch_tool_result` answers. */
  run(call: ModelToolCall): Promise<StepRecord> {
    return call.name === FETCH_TOOL_RESULT_TOOL ? this.fetch(call) : Promise.resolve(this.start(call));
  }

  /**
   * Background steps that ended `failed` since the last call, each returned once: the run's failure policy
   * judges them like any other step (a critical tool that failed in the background aborts the run, whether or
   * not the model fetched its result). Calls the run cancelled itself (`cancelAll`) are not returned.
   */
  takeFailures(): StepRecord[] {
    const failed: StepRecord[] = [];
    for (const call of this.calls.values()) {
      if (!call.done || call.reported) continue;
      call.reported = true;
      if (call.record.status === 'failed') failed.push(call.record);
    }
    return failed;
  }

  /** Waits for every background call to finish. */
  async waitAll(): Promise<void> {
    await Promise.all([...this.calls.values()].map((call) => call.settled));
  }

  /** Cancels every background call still running, waits until each has stopped; returns their step ids. */
  async cancelAll(): Promise<Set<number>> {
    const cancelled = new Set<number>();
    for (const call of this.calls.values()) {
      if (call.done) continue;
      call.reported = true;
      call.scope.cancel();
      cancelled.add(call.record.stepId);
    }
    await this.waitAll();
    return cancelled;
  }

  /**
   * The run's answer is in while calls still run: wait for them (`'wait'`), or cancel them and run the
   * compensations they owe (`'cancel'`). Returns how that compensation went, when one ran.
   */
  async finish(
    onFinish: BackgroundCallsOnFinish,
    options: { parallel?: boolean },
  ): Promise<CompensationOutcome | undefined> {
    if (onFinish === 'wait') {
      await this.waitAll();
      return undefined;
    }
    const cancelled = await this.cancelAll();
    const pending = this.step.pending;
    const owed = pending.filter((item) => cancelled.has(item.stepId));
    if (owed.length === 0) return undefined;
    const stepsById = new Map(this.step.state.steps.map((s) => [s.stepId, s]));
    const outcome = await compensate(owed, this.step.catalog, this.step.scope, stepsById, options);
    for (const item of owed) pending.splice(pending.indexOf(item), 1);
    return outcome;
  }

  private fetchLater(name: string): boolean {
    return this.step.catalog.get(name)?.asyncJob?.fetchLater === true;
  }

  /** Starts the call in its own scope; returns at once what the model sees: the call's handle. */
  private start(call: ModelToolCall): StepRecord {
    const scope = new CancellationScope();
    const running = scope.run(() => runToolStep(call, this.step));
    // runToolStep records its step before its first await: the last step is this call's.
    const record = this.step.state.steps[this.step.state.steps.length - 1]!;
    const handle = backgroundHandle(record.stepId);
    const background: BackgroundCall = {
      handle,
      record,
      scope,
      done: false,
      reported: false,
      settled: Promise.resolve(),
    };
    // A cancelled call ends its step itself (status, observation); the rejection is not an error of the run.
    const settle = () => {
      background.done = true;
    };
    background.settled = running.then(settle, settle);
    this.calls.set(handle, background);
    const status: BackgroundCallStatus = runningStatus(handle, record.tool);
    return { ...record, status: 'running', observation: { status: 'ok', output: status } };
  }

  /** A `fetch_tool_result` step: the call's observation when it is done, else its status (after waiting). */
  private async fetch(call: ModelToolCall): Promise<StepRecord> {
    const { state } = this.step;
    state.stepCount += 1;
    const stepId = state.stepCount;
    const record: StepRecord = {
      stepId,
      turn: state.turns,
      toolCallId: typeof call.id === 'string' ? call.id : `step_${stepId}`,
      tool: FETCH_TOOL_RESULT_TOOL,
      arguments: call.arguments,
      idempotencyKey: stepKey(this.step.scope, stepId),
      status: 'running',
      attempts: 0,
      startedAt: Date.now(),
    };
    state.steps.push(record);
    const parsed = parseFetchArguments(call.arguments);
    const background = parsed.ok ? this.calls.get(parsed.handle) : undefined;
    if (!parsed.ok || !background) {
      record.status = 'failed';
      record.observation = fetchRefusal(
        parsed.ok ? unknownHandle(parsed.handle, [...this.calls.keys()]) : parsed.message,
      );
    } else {
      if (!background.done && parsed.waitMs > 0) await waitForCall(background, parsed.waitMs, record);
      const done = background.done ? background.record.observation : undefined;
      record.status = done && background.record.status === 'failed' ? 'failed' : 'succeeded';
      record.observation = done ?? { status: 'ok', output: runningStatus(background.handle, background.record.tool) };
    }
    record.endedAt = Date.now();
    return record;
  }
}

/** A fetch's wait; a run cancelled meanwhile ends the fetch step as cancelled before the cancellation goes on. */
async function waitForCall(background: BackgroundCall, waitMs: number, record: StepRecord): Promise<void> {
  try {
    await condition(() => background.done, waitMs);
  } catch (error) {
    record.status = 'failed';
    record.observation = {
      status: 'error',
      code: TOOL_ERROR_CODES.CANCELLED,
      message: 'The run was cancelled while waiting for the background call.',
      hint: 'The run is being cancelled.',
      retryable: false,
      attempts: 0,
    };
    record.endedAt = Date.now();
    throw error;
  }
}

function runningStatus(handle: string, tool: string): BackgroundCallStatus {
  return {
    $durableTools: 'background-call',
    handle,
    tool,
    status: 'running',
    hint: `"${tool}" runs in the background. Do other work, then call ${FETCH_TOOL_RESULT_TOOL} with this handle (waitSeconds to wait for it).`,
  };
}

function unknownHandle(handle: string, known: string[]): string {
  return `There is no background call ${JSON.stringify(handle)} in this run${known.length > 0 ? ` (known: ${known.join(', ')})` : ''}.`;
}

function fetchRefusal(message: string): ToolErrorObservation {
  return {
    status: 'error',
    code: TOOL_ERROR_CODES.INVALID_ARGUMENTS,
    message,
    hint: `Call ${FETCH_TOOL_RESULT_TOOL} with the exact handle a background call returned.`,
    retryable: false,
    attempts: 0,
  };
}
