import type { AgentRunFork, AgentRunState, StepRecord } from '../contract/agent-run-types';
import type { ModelToolCall, TranscriptMessage } from '../contract/model-types';
import { TOOL_ERROR_CODES, type ToolObservation } from '../contract/activity-protocol';
import type { RunTranscript } from './run-transcript';
import { boundTurnObservation } from './turn-observations';

/** Stands in for a forked step the source recorded without an observation (the client refuses such forks). */
const NO_OBSERVATION: ToolObservation = {
  status: 'error',
  code: TOOL_ERROR_CODES.OUTCOME_UNKNOWN,
  message: 'The source run recorded no outcome for this step.',
  hint: 'Check the effect before doing it again.',
  retryable: false,
  attempts: 0,
};

/**
 * The source's step records as the forked run shows them: marked `forked` with the run that owns their
 * effects (the source, or the run the source itself forked them from).
 */
export function forkedStepRecords(fork: AgentRunFork): StepRecord[] {
  const origin = {
    workflowId: fork.sourceWorkflowId,
    ...(fork.sourceRunKey !== undefined ? { runKey: fork.sourceRunKey } : {}),
  };
  return fork.steps.map((step) => ({ ...step, forked: step.forked ?? origin }));
}

/**
 * The transcript messages of a recorded prefix, after the goal: for each model turn, the assistant's message
 * with its calls (as recorded: redacted, shortened arguments), then one tool message per call with its
 * observation, within the turn's observation budget as a live turn would be. The turns' text is not part of
 * the record, so the assistant messages carry calls only.
 */
export function forkedTranscriptMessages(steps: readonly StepRecord[]): TranscriptMessage[] {
  const messages: TranscriptMessage[] = [];
  let calls: ModelToolCall[] | undefined;
  let turn: number | undefined;
  let usedBytes = 0;
  for (const step of steps) {
    if (calls === undefined || step.turn !== turn) {
      calls = [];
      messages.push({ role: 'assistant', toolCalls: calls });
      turn = step.turn;
      usedBytes = 0;
    }
    calls.push({ id: step.toolCallId, name: step.tool, arguments: step.arguments });
    const bounded = boundTurnObservation(step.observation ?? NO_OBSERVATION, usedBytes);
    usedBytes = bounded.usedBytes;
    messages.push({
      role: 'tool',
      toolCallId: step.toolCallId,
      name: step.tool,
      stepId: step.stepId,
      observation: bounded.observation,
    });
  }
  return messages;
}

/** Where a forked run comes from, as its state shows it in every generation. */
export function forkOrigin(fork: AgentRunFork): NonNullable<AgentRunState['forkedFrom']> {
  return { workflowId: fork.sourceWorkflowId, fromStep: fork.fromStep };
}

/**
 * Starts a forked run's first generation from the recorded prefix: the forked step records, the step and turn
 * counters (the next step is `fromStep`), and the prefix in the transcript. No compensation is registered for
 * the forked steps: their effects belong to the source run.
 */
export function startFromForkedPrefix(state: AgentRunState, transcript: RunTranscript, fork: AgentRunFork): void {
  state.steps = forkedStepRecords(fork);
  state.stepCount = fork.fromStep - 1;
  state.turns = fork.turns;
  for (const message of forkedTranscriptMessages(fork.steps)) transcript.push(message);
}
