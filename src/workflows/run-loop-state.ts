import type { AgentRunCarryOver, AgentRunState } from '../contract/agent-run-types';
import { initialRunUsage } from './run-usage';

/**
 * The counters the run loop keeps between turns. They live in one object the loop's steps receive and return
 * to, so every step says what it reads and what it changes.
 */
export interface LoopCounters {
  /** Failed tool calls in a row (carried over to the next generation). */
  consecutiveToolErrors: number;
  /** Refused, empty or cut-off model turns in a row. */
  consecutiveTurnIssues: number;
  /** Tool calls settled in this continue-as-new generation. */
  stepsThisGeneration: number;
  /** Final answers the run's `output` schema refused in this generation (typed-answer.ts). */
  refusedAnswers?: number;
}

/** How a run ends early: its status, the reason, and whether the compensations owed run now. */
export interface RunAbort {
  status: 'failed' | 'cancelled';
  reason: string;
  compensate: boolean;
  /** A machine-readable code of the failure (the state's `failureCode`), when the engine has one. */
  code?: string;
}

/** The counters a generation starts with: the carried error streak, nothing else. */
export function initialLoopCounters(carried: AgentRunCarryOver | undefined): LoopCounters {
  return {
    consecutiveToolErrors: carried?.consecutiveToolErrors ?? 0,
    consecutiveTurnIssues: 0,
    stepsThisGeneration: 0,
  };
}

/** An abort for the failure policy or an engine failure: it always compensates. */
export function failedRun(reason: string): RunAbort {
  return { status: 'failed', reason, compensate: true };
}

/**
 * The state of a run that starts with nothing carried over: no turn, no step, no warning. The tool calls of a
 * user's workflow and of an MCP call keep theirs in the same shape, so `durable-tools approve` reads all three.
 */
export function newRunState(workflowId: string, goal: string, runKey?: string): AgentRunState {
  return {
    workflowId,
    runId: workflowId,
    ...(runKey !== undefined ? { runKey } : {}),
    goal,
    status: 'running',
    turns: 0,
    stepCount: 0,
    generation: 0,
    steps: [],
    policyWarnings: [],
    usage: initialRunUsage(),
  };
}
