import type { AgentRunCarryOver, AgentRunState, PendingCompensation, RunUsage } from '../contract/agent-run-types';
import type { TranscriptMessage } from '../contract/model-types';
import { PAYLOAD_LIMITS } from '../contract/payload-limits';
import type { LoopCounters } from './run-loop-state';
import { usageTotals } from './run-usage';

/** What the continue-as-new decision looks at, before each model turn. */
export interface GenerationProgress {
  /** Temporal's own suggestion (`workflowInfo().continueAsNewSuggested`): the history is getting long. */
  suggested: boolean;
  /** The run's `continueAsNewAfterSteps`, if it set one. */
  everySteps: number | undefined;
  stepsThisGeneration: number;
  /** JSON bytes of the transcript this generation added. */
  transcriptBytes: number;
}

/**
 * Whether the run continues as new before its next turn: when Temporal suggests it, after the run's own
 * number of tool calls, or when this generation's transcript is too large for a full resend to stay within
 * budget (after the transcript store lost it).
 */
export function continueAsNewDue(progress: GenerationProgress): boolean {
  return (
    progress.suggested ||
    (progress.everySteps !== undefined && progress.stepsThisGeneration >= progress.everySteps) ||
    progress.transcriptBytes > PAYLOAD_LIMITS.generationTranscriptBytes
  );
}

/** What a generation hands the next one besides its state and counters. */
export interface CarriedParts {
  compensations: PendingCompensation[];
  transcript: { cursor: number; unsent: TranscriptMessage[] };
  irreversibleDone: boolean;
  /** Whether the run's keys carry its first execution's run id. */
  runScopedKeys: boolean;
  /** A dry run: the source steps whose records already answered a call. */
  dryRunAnswered?: ReadonlySet<number>;
}

/** The state the next generation starts from: counters, compensations owed, transcript cursor, usage. */
export function buildCarryOver(
  state: Pick<AgentRunState, 'generation' | 'stepCount' | 'turns' | 'subAgentSteps'> & { usage: RunUsage },
  counters: LoopCounters,
  parts: CarriedParts,
): AgentRunCarryOver {
  return {
    generation: state.generation + 1,
    stepCount: state.stepCount,
    turns: state.turns,
    consecutiveToolErrors: counters.consecutiveToolErrors,
    compensations: parts.compensations,
    transcriptCursor: parts.transcript.cursor,
    unsentMessages: parts.transcript.unsent,
    irreversibleDone: parts.irreversibleDone,
    usage: usageTotals(state.usage),
    ...(parts.runScopedKeys ? { runScopedKeys: true } : {}),
    ...(state.subAgentSteps ? { subAgentSteps: state.subAgentSteps } : {}),
    ...(parts.dryRunAnswered ? { dryRunAnswered: [...parts.dryRunAnswered] } : {}),
  };
}
