import {
  ContinueAsNew,
  continueAsNew,
  isCancellation,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { CallModelInput, ModelActivities } from '../activities/model-activities';
import type { ModelToolCall, ModelTurn } from '../contract/model-types';
import { describeActivityFailure, ENGINE_FAILURE_TYPES, isEngineFailure } from '../contract/activity-protocol';
import { SEARCH_ATTRIBUTES } from '../contract/search-attributes';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { exceedsCatalogBudget } from '../contract/tool-disclosure';
import { AGENT_RUN_DEFAULTS, ENGINE_ACTIVITY_OPTIONS, SUMMARY_MAX_LENGTH } from './agent-run-defaults';
import { getRunStateQuery } from '../contract/agent-run-messages';
import type {
  AgentRunCarryOver,
  AgentRunInput,
  AgentRunResult,
  AgentRunState,
  RunStatus,
  StepRecord,
} from '../contract/agent-run-types';
import { modelVisibleTools, undoToolNames } from '../contract/tool-visibility';
import { approvalRejectionVerdict, createApprovalGate } from './approval-gate';
import { checkEffectTiers } from './effect-tiers';
import { describeToolsStep, isDescribeToolsCall } from './describe-tools-step';
import { modelCallOptions } from './model-call-options';
import { MAX_CONSECUTIVE_TURN_ISSUES, turnIssueNote, turnIssueReason } from './model-turn-issue';
import { RunTranscript } from './run-transcript';
import { endWithOutcome, showOutcome } from './run-outcome';
import { addTurnUsage, initialRunUsage, modelTurnSummary, usageLimitReason, usageTotals } from './run-usage';
import { compensate } from './saga';
import { runScope } from './run-ownership';
import { runToolStep, type StepContext } from './tool-step';
import { BackgroundCalls } from './background-calls';
import { markRunStatus, traceModelTurn, traceToolStep } from './run-tracing';
import { boundObservation } from '../contract/bound-observation';
import { jsonByteLength, PAYLOAD_LIMITS, truncateText } from '../contract/payload-limits';
import { boundedRunView, transcriptToolCalls } from './run-budget';

const { describeTools } = proxyActivities<{ describeTools(names?: readonly string[]): Promise<ToolCatalogEntry[]> }>(
  ENGINE_ACTIVITY_OPTIONS.describeTools,
);

/**
 * One agent run: model → tool calls → observations, until the model finishes or the run is aborted.
 *
 * - The workflow knows tools only through the JSON catalog (`describeTools`, recorded in history).
 * - Each tool call is an activity whose type is the tool's name, keyed by
 *   `${workflowId}/${firstExecutionRunId}/${stepId}` (the run's, never another run's with the same id);
 *   a call the model got wrong becomes an error observation the model can correct.
 * - A tool with an undo tool registers its compensation before it runs. When the run is aborted (failure
 *   policy, limit, cancellation) the compensations run newest first in a non-cancellable scope.
 * - The model activity gets only the transcript delta; the transcript lives in the worker's transcript
 *   store, so the history grows by a constant amount per step.
 * - The run continues as new when Temporal suggests it (or every `continueAsNewAfterSteps` calls),
 *   carrying its step counter, compensations and transcript cursor.
 */
export async function agentRun(input: AgentRunInput): Promise<AgentRunResult> {
  return endWithOutcome(await runAgent(input));
}

/** The run itself: returns its result whatever the outcome; {@link endWithOutcome} decides how the workflow ends. */
async function runAgent(input: AgentRunInput): Promise<AgentRunResult> {
  const { workflowId, firstExecutionRunId } = workflowInfo();
  const carried = input.carriedOver;
  // Keys, compensations and claim checks belong to this run, not to its workflow id (run-ownership.ts).
  const scope = runScope(carried);
  const maxSteps = input.limits?.maxSteps ?? AGENT_RUN_DEFAULTS.maxSteps;
  const maxTurns = input.limits?.maxTurns ?? AGENT_RUN_DEFAULTS.maxTurns;
  const state: AgentRunState = {
    runId: workflowId,
    runKey: scope.keyPrefix,
    goal: input.goal,
    status: 'running',
    turns: carried?.turns ?? 0,
    stepCount: carried?.stepCount ?? 0,
    generation: carried?.generation ?? 0,
    steps: [],
    policyWarnings: [],
    usage: initialRunUsage(carried?.usage),
  };
  setHandler(getRunStateQuery, () => boundedRunView(state));
  const approvals = createApprovalGate(workflowId, state, input.approval, input.trackApprovalSearchAttribute === true);
  if (!carried) setStatus(state, 'running', input);

  const catalog = await describeTools();
  // Undo tools are never the model's: they run only as compensations, whatever allowedTools says.
  const visible = new Set(modelVisibleTools(catalog, input.allowedTools).map((entry) => entry.name));
  state.policyWarnings = checkEffectTiers(catalog, visible, input.approval);
  // Progressive disclosure: over the catalog budget, the model sees names, one-line descriptions and
  // describe_tools; the engine still checks every call against the full schema.
  const disclosedOnDemand = exceedsCatalogBudget(
    catalog.filter((entry) => visible.has(entry.name)),
    input.toolDisclosure,
  );
  if (disclosedOnDemand) state.toolsDisclosedOnDemand = true;
  const step: StepContext = {
    scope,
    state,
    catalog: new Map(catalog.map((entry) => [entry.name, entry])),
    visible,
    undoTools: undoToolNames(catalog),
    pending: [...(carried?.compensations ?? [])],
    irreversibleDone: carried?.irreversibleDone ?? false,
    approvals,
  };
  const transcript = carried
    ? new RunTranscript({ cursor: carried.transcriptCursor, unsent: carried.unsentMessages ?? [] })
    : new RunTranscript({ goal: input.goal });
  const runKey = `${workflowId}/${firstExecutionRunId}`;
  let consecutiveToolErrors = carried?.consecutiveToolErrors ?? 0;
  let consecutiveTurnIssues = 0;
  let stepsThisGeneration = 0;
  // Calls of fetch-later tools run in the background; a run without such a tool issues no command for them.
  const background = new BackgroundCalls(step);
  const runStep = (call: ModelToolCall): Promise<StepRecord> =>
    traceToolStep(String(call?.name), step.pending, () => {
      if (isDescribeToolsCall(call, disclosedOnDemand)) return describeToolsStep(call, step);
      return background.handles(call) ? background.run(call) : runToolStep(call, step);
    });

  const askModel = async (): Promise<ModelTurn> => {
    const request = (delta: { fromIndex: number; messages: CallModelInput['messages'] }): CallModelInput => ({
      runKey,
      goal: input.goal,
      settings: input.model,
      ...(input.allowedTools ? { allowedTools: input.allowedTools } : {}),
      turn: state.turns,
      ...delta,
      ...(disclosedOnDemand ? { toolView: 'summary' as const } : {}),
    });
    const summary = modelTurnSummary(state.turns + 1, input.model, state.usage, SUMMARY_MAX_LENGTH);
    const { callModel } = proxyActivities<ModelActivities>(modelCallOptions(input.model, summary));
    try {
      const turn = await callModel(request(transcript.delta()));
      transcript.markStored();
      return turn;
    } catch (error) {
      if (!isEngineFailure(error, ENGINE_FAILURE_TYPES.TRANSCRIPT_MISSING)) throw error;
      // The worker's transcript store does not have this run (another machine, a restart): send it whole.
      const turn = await callModel(request(transcript.resend(input.goal)));
      transcript.markStored();
      return turn;
    }
  };

  const abort = async (
    status: 'failed' | 'cancelled',
    reason: string,
    compensateNow = true,
  ): Promise<AgentRunResult> => {
    state.reason = truncateText(reason, PAYLOAD_LIMITS.errorTextChars * 2);
    // Nothing runs on after the run ends, and no undo races a forward call still finishing.
    if (background.outstanding > 0) await background.cancelAll();
    if (!compensateNow || step.pending.length === 0) return finish(state, status, input);
    const stepsById = new Map(state.steps.map((s) => [s.stepId, s]));
    const outcome = await compensate(step.pending, step.catalog, step.scope, stepsById, input.compensation ?? {});
    step.pending.length = 0;
    if (outcome.failedStep !== undefined) {
      state.failedCompensationStep = outcome.failedStep;
      state.reason = `${reason} Compensation of step ${outcome.failedStep} (${outcome.failedTool}) failed: ${outcome.error}`;
      return finish(state, 'compensation_failed', input);
    }
    return finish(state, status === 'cancelled' ? 'cancelled' : 'compensated', input);
  };

  // A background step that failed is judged by the failure policy as soon as the run sees it has ended.
  const backgroundVerdict = (): string | undefined => {
    for (const record of background.takeFailures()) {
      const reason = failurePolicyVerdict(record, input, 0);
      if (reason) return reason;
    }
    return undefined;
  };

  try {
    for (;;) {
      const failedInBackground = backgroundVerdict();
      if (failedInBackground) return await abort('failed', failedInBackground);
      if (state.turns >= maxTurns) {
        return await abort(
          'failed',
          `The run reached its limit of ${maxTurns} model turns.`,
          input.failurePolicy?.compensateOnLimit ?? true,
        );
      }
      const every = input.continueAsNewAfterSteps;
      if (
        workflowInfo().continueAsNewSuggested ||
        (every !== undefined && stepsThisGeneration >= every) ||
        // Keeps a full resend of this generation's transcript (after the store lost it) within budget.
        transcript.generationBytes > PAYLOAD_LIMITS.generationTranscriptBytes
      ) {
        // A background call cannot be carried over: the next generation starts once none is running.
        if (background.outstanding > 0) await background.waitAll();
        const transcriptCarry = transcript.carryOver();
        const carryOver: AgentRunCarryOver = {
          generation: state.generation + 1,
          stepCount: state.stepCount,
          turns: state.turns,
          consecutiveToolErrors,
          compensations: step.pending,
          transcriptCursor: transcriptCarry.cursor,
          unsentMessages: transcriptCarry.unsent,
          irreversibleDone: step.irreversibleDone,
          usage: usageTotals(state.usage),
          ...(scope.runKey !== undefined ? { runScopedKeys: true } : {}),
        };
        return await continueAsNew<typeof agentRun>({ ...input, carriedOver: carryOver });
      }

      const turn = await traceModelTurn(state.turns + 1, askModel);
      state.turns += 1;
      addTurnUsage(state.usage, state.turns, turn, input.model, input.costTable);
      const toolCalls = (Array.isArray(turn.toolCalls) ? turn.toolCalls : []).slice(
        0,
        PAYLOAD_LIMITS.maxToolCallsPerTurn,
      );
      const text =
        typeof turn.text === 'string' ? truncateText(turn.text, PAYLOAD_LIMITS.modelTurnTextChars) : undefined;
      transcript.push({
        role: 'assistant',
        ...(text !== undefined ? { text } : {}),
        toolCalls: transcriptToolCalls(toolCalls),
      });
      const dropped = (turn.droppedToolCalls ?? 0) + Math.max(0, (turn.toolCalls?.length ?? 0) - toolCalls.length);
      if (dropped > 0 && toolCalls.length > 0) {
        transcript.push({
          role: 'user',
          content: `(${dropped} further tool calls of your last turn were not run: at most ${PAYLOAD_LIMITS.maxToolCallsPerTurn} calls per turn.)`,
        });
      }
      const overBudget = turn.done && !turn.issue ? undefined : usageLimitReason(state.usage, input.limits);
      if (overBudget) return await abort('failed', overBudget, input.failurePolicy?.compensateOnLimit ?? true);
      if (turn.issue && toolCalls.length === 0) {
        // A refusal, an empty or a cut-off turn is an observation for the model, never a completed answer.
        consecutiveTurnIssues += 1;
        if (consecutiveTurnIssues >= MAX_CONSECUTIVE_TURN_ISSUES) {
          return await abort('failed', turnIssueReason(turn.issue, consecutiveTurnIssues));
        }
        transcript.push({ role: 'user', content: turnIssueNote(turn.issue) });
        continue;
      }
      consecutiveTurnIssues = 0;
      if (turn.done || toolCalls.length === 0) {
        state.answer = text ?? '';
        const undone =
          background.outstanding > 0
            ? await background.finish(input.backgroundCalls?.onFinish ?? 'wait', input.compensation ?? {})
            : undefined;
        if (undone?.failedStep !== undefined) {
          state.failedCompensationStep = undone.failedStep;
          state.reason = `Compensation of background step ${undone.failedStep} (${undone.failedTool}) failed: ${undone.error}`;
          return finish(state, 'compensation_failed', input);
        }
        // Waited-for background calls that failed count like any step: a critical one aborts the run.
        const failedWhileWaiting = backgroundVerdict();
        if (failedWhileWaiting) return await abort('failed', failedWhileWaiting);
        return finish(state, 'completed', input);
      }
      if (state.stepCount + toolCalls.length > maxSteps) {
        return await abort(
          'failed',
          `The run reached its limit of ${maxSteps} tool calls.`,
          input.failurePolicy?.compensateOnLimit ?? true,
        );
      }
      // Calls of one turn run one after another (the failure policy may stop the turn after any of them),
      // or all at once with `parallelToolCalls`; step ids (so idempotency keys and the compensation order)
      // follow the model's order either way.
      let turnObservationBytes = 0;
      const settle = (record: StepRecord): string | undefined => {
        stepsThisGeneration += 1;
        // One turn's observations together stay within budget: later ones are shortened in the transcript.
        const observation = boundObservation(
          record.observation!,
          Math.max(1_024, PAYLOAD_LIMITS.turnObservationBytes - turnObservationBytes),
          'This turn returned too much; call fewer tools per turn, or read stored outputs page by page.',
        );
        turnObservationBytes += jsonByteLength(observation);
        transcript.push({
          role: 'tool',
          toolCallId: record.toolCallId,
          name: record.tool,
          stepId: record.stepId,
          observation,
        });
        consecutiveToolErrors = record.status === 'failed' ? consecutiveToolErrors + 1 : 0;
        return (
          approvalRejectionVerdict(record, input.approval) ?? failurePolicyVerdict(record, input, consecutiveToolErrors)
        );
      };
      let abortReason: string | undefined;
      if (input.parallelToolCalls) {
        // allSettled, not all: when the run is cancelled, every call must have stopped before compensation
        // starts, or an undo could race a forward call that is still finishing.
        const outcomes = await Promise.allSettled(toolCalls.map((call) => runStep(call)));
        const rejected = outcomes.find((outcome) => outcome.status === 'rejected');
        if (rejected) throw rejected.reason;
        for (const outcome of outcomes) {
          if (outcome.status === 'fulfilled') abortReason = abortReason ?? settle(outcome.value);
        }
      } else {
        for (const call of toolCalls) {
          abortReason = settle(await runStep(call));
          if (abortReason) break;
        }
      }
      if (abortReason) return await abort('failed', abortReason);
    }
  } catch (error) {
    // continueAsNew() ends this generation by throwing: it is not a failure and owes no compensation.
    if (error instanceof ContinueAsNew) throw error;
    if (isCancellation(error)) {
      showOutcome(await abort('cancelled', 'The run was cancelled.'));
      throw error;
    }
    // Only the engine's own activities (catalog, model) can get here: tool failures are observations.
    return await abort('failed', `The run stopped: ${describeActivityFailure(error)}`);
  }
}

/** Whether the failure policy aborts the run after this step; the reason if so. */
function failurePolicyVerdict(record: StepRecord, input: AgentRunInput, consecutiveErrors: number): string | undefined {
  if (record.status !== 'failed' || record.observation?.status !== 'error') return undefined;
  const policy = input.failurePolicy;
  if (!policy) return undefined;
  const critical = policy.criticalTools === '*' || (policy.criticalTools ?? []).includes(record.tool);
  // A critical step that did not succeed aborts the run, whatever the reason: permanent error, attempts or
  // time spent on transient errors or timeouts, OUTCOME_UNKNOWN, a tool missing on the worker, a refusal.
  // "retryable" only says a later call might succeed; this call did not, so the run is not `completed`.
  if (critical) {
    const { code, message, retryable } = record.observation;
    const how = retryable ? `failed with ${code} (no attempt left)` : `failed permanently with ${code}`;
    return `Step ${record.stepId} (${record.tool}) ${how}: ${message}`;
  }
  if (policy.maxConsecutiveToolErrors !== undefined && consecutiveErrors >= policy.maxConsecutiveToolErrors) {
    return `${consecutiveErrors} tool calls failed in a row (last: step ${record.stepId}, ${record.tool}).`;
  }
  return undefined;
}

function finish(state: AgentRunState, status: RunStatus, input: AgentRunInput): AgentRunResult {
  setStatus(state, status, input);
  // The result references large outputs (claim checks) and stays within the payload budget.
  return boundedRunView(state);
}

function setStatus(state: AgentRunState, status: RunStatus, input: AgentRunInput): void {
  state.status = status;
  markRunStatus(status);
  if (input.trackStatusSearchAttribute) {
    upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.runStatus, value: status }]);
  }
}
