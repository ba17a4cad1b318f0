import { patched } from '@temporalio/workflow';
import { TOOL_ERROR_CODES, type ToolErrorObservation } from '../contract/activity-protocol';
import { DEFAULT_ANSWER_ATTEMPTS, FINAL_ANSWER_STEP_TOOL } from '../contract/agent-output';
import type { StepRecord } from '../contract/agent-run-types';
import type { ModelTurn } from '../contract/model-types';
import { boundObservation } from '../contract/bound-observation';
import { PAYLOAD_LIMITS } from '../contract/payload-limits';
import { TYPED_ANSWERS_PATCH } from './engine-patches';
import type { RunAbort } from './run-loop-state';
import { stepKey } from './run-ownership';
import { transcriptToolCalls } from './run-budget';
import type { RunLoop } from './run-types';

/** What the run does with a final answer of a run with a typed answer (`input.output`). */
export type TypedAnswerVerdict =
  /** The worker validated the answer: the run completes with `value` as its `output`. */
  | { kind: 'accept'; value: unknown }
  /** The answer was refused: its step is recorded, the model reads why and answers again. */
  | { kind: 'retry' }
  /** Too many wrong answers (or no check at all): the run fails with `INVALID_ANSWER`. */
  | { kind: 'abort'; abort: RunAbort };

/**
 * Judges the final answer of a run with `output` (docs/agents.md, "Typed answers"): the model activity checked it
 * against the schema on the worker (`turn.answerCheck`). A refused answer becomes a step of its own (tool
 * `final_answer`, status failed, the `INVALID_ANSWER` observation) and a note the model reads before it answers
 * again; after `output.maxAttempts` refused answers (default 3) the run fails with `INVALID_ANSWER`. A turn the
 * worker did not check (a worker without typed answers) never completes the run. Undefined for a run without
 * `output` (or one recorded before typed answers): the answer is text, as ever.
 */
export function judgeTypedAnswer(run: RunLoop, turn: ModelTurn, answer: string): TypedAnswerVerdict | undefined {
  const output = run.input.output;
  if (!output || !patched(TYPED_ANSWERS_PATCH)) return undefined;
  const check = turn.answerCheck;
  if (check?.ok) return { kind: 'accept', value: check.value };
  const observation: ToolErrorObservation = check?.observation ?? unchecked();
  recordRefusedAnswer(run, check ? check.sent : answer, observation);
  const refused = (run.counters.refusedAnswers ?? 0) + 1;
  run.counters.refusedAnswers = refused;
  const allowed = output.maxAttempts ?? DEFAULT_ANSWER_ATTEMPTS;
  if (!check || refused >= allowed) {
    return {
      kind: 'abort',
      abort: {
        status: 'failed',
        reason: `INVALID_ANSWER: the final answer did not match the agent's output schema ${check ? `${refused} times` : '(no worker checked it)'}: ${observation.message}`,
        compensate: true,
        code: TOOL_ERROR_CODES.INVALID_ANSWER,
      },
    };
  }
  run.transcript.push({
    role: 'user',
    content: `[durable-tools] Your answer was refused: ${JSON.stringify(observation)}`,
  });
  return { kind: 'retry' };
}

/** The refused answer's step: what the model sent, the observation it reads; no tool ran. */
function recordRefusedAnswer(run: RunLoop, sent: unknown, observation: ToolErrorObservation): void {
  const { state } = run;
  state.stepCount += 1;
  const stepId = state.stepCount;
  const [call] = transcriptToolCalls([{ id: `answer_${state.turns}`, name: FINAL_ANSWER_STEP_TOOL, arguments: sent }]);
  const now = Date.now();
  const step: StepRecord = {
    stepId,
    turn: state.turns,
    toolCallId: `answer_${state.turns}`,
    tool: FINAL_ANSWER_STEP_TOOL,
    arguments: call?.arguments ?? sent,
    idempotencyKey: stepKey(run.step.scope, stepId),
    status: 'failed',
    observation: boundObservation(observation, PAYLOAD_LIMITS.maxToolOutputBytes) as ToolErrorObservation,
    attempts: 0,
    startedAt: now,
    endedAt: now,
    finalAnswer: true,
  };
  state.steps.push(step);
}

function unchecked(): ToolErrorObservation {
  return {
    status: 'error',
    code: TOOL_ERROR_CODES.INVALID_ANSWER,
    message:
      "No worker checked the answer against the agent's output schema (the worker that asked the model does not know typed answers).",
    hint: 'Run the agent on a worker of this version of durable-tools.',
    retryable: false,
    attempts: 0,
  };
}
