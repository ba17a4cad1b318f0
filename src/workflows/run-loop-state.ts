import type { AgentRunCarryOver } from '../contract/agent-run-types';

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
}

/** How a run ends early: its status, the reason, and whether the compensations owed run now. */
export interface RunAbort {
  status: 'failed' | 'cancelled';
  reason: string;
  compensate: boolean;
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
