import { ContinueAsNew, continueAsNew, isCancellation, workflowInfo } from '@temporalio/workflow';
import { describeActivityFailure } from '../contract/activity-protocol';
import type { AgentRunInput, AgentRunResult } from '../contract/agent-run-types';
import { runTurnCalls } from './run-calls';
import { buildCarryOver, continueAsNewDue } from './run-carry-over';
import { abortRun, backgroundAbort, completeRun } from './run-end';
import { startRunLoop, type Embedding } from './run-loop';
import type { RunLoop } from './run-types';
import { failedRun, type RunAbort } from './run-loop-state';
import { turnLimitAbort } from './run-limits';
import { showOutcome, endWithOutcome } from './run-outcome';
import { traceAgentInvocation } from './run-tracing';
import { takeTurn } from './run-turn';
import { judgeTurn } from './turn-verdict';
import { judgeTypedAnswer } from './typed-answer';

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
  return endWithOutcome(await runAgentLoop(input));
}

/**
 * The run itself: returns its result whatever the outcome; {@link endWithOutcome} decides how the workflow
 * ends. Each round is one turn of the loop ({@link playRound}); tool failures are observations, so only the
 * engine's own activities (the model's) and cancellation get to the catch. `embedding` runs it inside a user's
 * own workflow (`runAgent` of durable-tools/workflow, embedded-agent.ts).
 */
export function runAgentLoop(input: AgentRunInput, embedding?: Embedding): Promise<AgentRunResult> {
  const invocation = embedding?.conversationId !== undefined ? { conversationId: embedding.conversationId } : {};
  // One `invoke_agent` span per invocation when the run is traced (run-tracing.ts); never a command.
  return traceAgentInvocation({ input, ...invocation }, () => playAgentLoop(input, embedding));
}

async function playAgentLoop(input: AgentRunInput, embedding?: Embedding): Promise<AgentRunResult> {
  const { run, failure } = await startRunLoop(input, embedding);
  try {
    // A turn asked as the generation started failed (run-loop.ts): the run ends as it would had the loop asked it.
    if (failure !== undefined) throw failure;
    for (;;) {
      const result = await playRound(run);
      if (result) return result;
    }
  } catch (error) {
    // continueAsNew() ends this generation by throwing: it is not a failure and owes no compensation.
    if (error instanceof ContinueAsNew) throw error;
    if (isCancellation(error)) {
      showOutcome(await abortRun(run, { status: 'cancelled', reason: 'The run was cancelled.', compensate: true }));
      throw error;
    }
    return await abortRun(run, failedRun(`The run stopped: ${describeActivityFailure(error)}`));
  }
}

/**
 * One round of the loop: the limits, maybe continue as new, a model turn, its verdict, then its calls.
 * Returns the run's result when the round ends the run.
 */
async function playRound(run: RunLoop): Promise<AgentRunResult | undefined> {
  const stop = backgroundAbort(run) ?? turnLimitAbort(run.state.turns, run.limits, run.input);
  if (stop) return await abortRun(run, stop);
  if (continueAsNewDueNow(run)) {
    // An embedded run never continues the user's workflow as new: it ends before the history gets too long.
    return run.embedded ? await abortRun(run, historyBoundAbort(run)) : await continueRunAsNew(run);
  }
  // A turn asked ahead and its calls come at once, not as promises (run-turn.ts, run-calls.ts).
  const taken = takeTurn(run);
  const { turn, reading, ranAhead } = taken instanceof Promise ? await taken : taken;
  const judged = judgeTurn(turn, reading, {
    input: run.input,
    limits: run.limits,
    usage: run.state.usage,
    // A sub-agent's tool calls count against the run's step limit too.
    stepCount: run.state.stepCount + (run.state.subAgentSteps ?? 0),
    turnIssues: run.counters.consecutiveTurnIssues,
  });
  run.counters.consecutiveTurnIssues = judged.turnIssues;
  const { verdict } = judged;
  switch (verdict.kind) {
    case 'abort':
      return await abortRun(run, verdict.abort);
    case 'retry':
      run.transcript.push({ role: 'user', content: verdict.note });
      return undefined;
    case 'answer': {
      // A typed answer (docs/agents.md): validated on the worker, refused ones corrected by the model.
      const typed = judgeTypedAnswer(run, turn, verdict.answer);
      if (typed?.kind === 'retry') return undefined;
      if (typed?.kind === 'abort') return await abortRun(run, typed.abort);
      if (typed?.kind === 'accept') run.state.output = typed.value;
      return await completeRun(run, verdict.answer);
    }
    case 'run-calls': {
      const settled = runTurnCalls(run, reading.calls, ranAhead);
      const abortReason = settled instanceof Promise ? await settled : settled;
      if (abortReason) return await abortRun(run, failedRun(abortReason));
      // A handoff's child completed: the run ends with its answer (docs/sub-agents.md, "Handoffs").
      const handedOff = run.step.subAgents?.handoffAnswer;
      return handedOff !== undefined ? await completeRun(run, handedOff) : undefined;
    }
  }
}

function continueAsNewDueNow(run: RunLoop): boolean {
  // Turns asked ahead are taken in this generation: their calls ran under this generation's keys.
  if (run.turns.holdsTurnsAhead() || run.continuesBetweenTurns) return false;
  return continueAsNewDue({
    suggested: workflowInfo().continueAsNewSuggested,
    everySteps: run.input.continueAsNewAfterSteps,
    stepsThisGeneration: run.counters.stepsThisGeneration,
    transcriptBytes: run.transcript.generationBytes,
  });
}

/**
 * Ends this generation and starts the next with the carried state. A background call cannot be carried
 * over: the next generation starts once none is running.
 */
async function continueRunAsNew(run: RunLoop): Promise<never> {
  const { background, step } = run;
  if (background.outstanding > 0) await background.waitAll();
  const carryOver = buildCarryOver(run.state, run.counters, {
    compensations: step.pending,
    transcript: run.transcript.carryOver(),
    irreversibleDone: step.irreversibleDone,
    runScopedKeys: step.scope.runKey !== undefined,
    ...(step.dryRun ? { dryRunAnswered: step.dryRun.answered } : {}),
  });
  return await continueAsNew<typeof agentRun>({ ...run.input, carriedOver: carryOver });
}

/**
 * How an embedded run ends where an `agentRun` would continue as new: failed, with the reason, its compensations
 * run unless the failure policy says `compensateOnLimit: false` (as for the run's other limits).
 */
function historyBoundAbort(run: RunLoop): RunAbort {
  return {
    status: 'failed',
    reason:
      'The agent stopped: the workflow it runs in has a long history (Temporal suggests continuing as new, or the ' +
      "run's transcript is too large for one generation), and an agent embedded with runAgent never continues its " +
      'workflow as new. Run long agents as an agentRun child workflow.',
    compensate: run.input.failurePolicy?.compensateOnLimit !== false,
  };
}
