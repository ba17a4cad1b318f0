/**
 * The typed answer of an agent (docs/agents.md, "Typed answers"): the JSON Schema its final answer must match,
 * carried in the run input so the worker can check the answer like tool arguments. Pure data.
 */
import type { ToolErrorObservation } from './activity-protocol';

/** What a run with a typed answer carries: the answer's JSON Schema (an object) and how often it may be wrong. */
export interface AgentOutputSpec {
  /** JSON Schema of the answer (draft 2020-12, as `z.toJSONSchema` writes it); its top level is an object. */
  schema: Record<string, unknown>;
  /** Wrong answers the model may correct before the run fails with `INVALID_ANSWER` (default 3). */
  maxAttempts?: number;
}

/** Wrong answers a run allows before it fails, unless its `output.maxAttempts` says otherwise. */
export const DEFAULT_ANSWER_ATTEMPTS = 3;

/** The name a refused final answer's step shows as its tool (`StepRecord.finalAnswer`). */
export const FINAL_ANSWER_STEP_TOOL = 'final_answer';

/**
 * The worker's check of a final answer against the run's output schema, recorded with the model turn: the
 * validated value, or the observation the model reads.
 */
export type AnswerCheck =
  | { ok: true; value: unknown }
  | {
      ok: false;
      /** The answer as sent: parsed JSON when it was JSON, else its text. */
      sent: unknown;
      observation: ToolErrorObservation;
    };
