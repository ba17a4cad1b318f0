/**
 * Input, state and result of an agent run. Pure types: shared by the workflow, the client and the worker.
 */
import type { ModelSettings } from '../model/model-types';
import type { ToolObservation } from '../tools/tool-error-code';

/** Limits that end a run that does not finish by itself. */
export interface AgentRunLimits {
  /** Maximum number of tool calls in the run (default 50). */
  maxSteps?: number;
  /** Maximum number of model turns (default 25). */
  maxTurns?: number;
}

/** What a client passes to start an agent run. */
export interface AgentRunInput {
  /** What the user wants done, in words. */
  goal: string;
  /** Which model to use; `{ provider: 'scripted', script }` runs offline. */
  model: ModelSettings;
  /** Tool names the model may see and call; all tools of the worker when omitted. */
  allowedTools?: string[];
  limits?: AgentRunLimits;
  /**
   * Keep the `DurableRunStatus` search attribute up to date. Set by the client helpers when the server
   * has the attribute registered (an unregistered attribute would fail the workflow task).
   */
  trackStatusSearchAttribute?: boolean;
}

/** Status of one tool call. */
export type StepStatus = 'pending' | 'running' | 'succeeded' | 'failed';

/** One tool call of a run, as the state query shows it. */
export interface StepRecord {
  /** Step number within the run, from 1; part of the idempotency key. */
  stepId: number;
  /** Model turn that proposed the call, from 1. */
  turn: number;
  toolCallId: string;
  tool: string;
  /** The model's raw arguments. */
  arguments: unknown;
  idempotencyKey: string;
  status: StepStatus;
  observation?: ToolObservation;
  /** Attempts the engine made (known once the step has ended). */
  attempts?: number;
  /** Workflow time (ms since epoch) when the step started and ended. */
  startedAt?: number;
  endedAt?: number;
}

/** Status of a whole run. */
export type RunStatus = 'running' | 'completed' | 'step_limit' | 'failed';

/** What the `getRunState` query returns. */
export interface AgentRunState {
  runId: string;
  goal: string;
  status: RunStatus;
  /** Model turns taken so far. */
  turns: number;
  steps: StepRecord[];
  /** The model's final answer, once completed. */
  answer?: string;
  /** Why the run stopped, when it did not complete. */
  reason?: string;
}

/** What an agent run returns. */
export type AgentRunResult = AgentRunState;
