import type { AgentRunResult } from '../contract/agent-run-types';
import type { DryRunReadOnlyTools } from '../contract/dry-run-types';
import type { ModelSettings } from '../contract/model-types';
import { DurableToolsError } from '../contract/durable-tools-error';
import type { ForkAgentRunOptions } from './fork-agent-run';

/** What a scorer is given: the recorded run and its dry re-run against the current model and tools. */
export interface EvalScorerInput {
  /** The recorded run's result (its state, as `show` reads it). */
  source: AgentRunResult;
  /** The dry re-run's result. */
  rerun: AgentRunResult;
}

/**
 * A scorer's verdict: `true`/`false` (score 1/0), a number (the score; it passes at or above the scorer's
 * threshold, or 1 without one), or a score with an explicit pass and a message for the report.
 */
export type EvalScore = boolean | number | { score: number; pass?: boolean; message?: string };

/** A scoring function of an evaluation suite. */
export type EvalScorer = (input: EvalScorerInput) => EvalScore | Promise<EvalScore>;

/**
 * An evaluation suite (`durable-tools eval <suite>`, `evaluateAgentRuns`): which recorded runs to re-run dry,
 * against which model and prompt, how to score each re-run, and the thresholds the suite must meet.
 *
 * @example
 * ```ts
 * export const suite: EvalSuite = {
 *   runs: { query: "ExecutionStatus = 'Completed'", limit: 20 },
 *   model: { provider: 'openai', model: 'gpt-4.1-mini' },
 *   scorers: { completes: ({ rerun }) => rerun.status === 'completed' },
 *   thresholds: { completes: 0.9 },
 * };
 * ```
 */
export interface EvalSuite {
  /** The suite's name in reports (default: the module's file name, or `eval`). */
  name?: string;
  /**
   * The recorded runs: workflow ids, or a visibility query (ANDed with `WorkflowType = 'agentRun'`; dry runs
   * it finds are skipped) with a limit (default 50).
   */
  runs: readonly string[] | { query: string; limit?: number };
  /** The model to evaluate (default: each recorded run's own); a function chooses per recorded run. */
  model?: ModelSettings | ((source: AgentRunResult) => ModelSettings);
  /** The goal (prompt) of the re-runs (default: each recorded run's own). */
  goal?: string | ((source: AgentRunResult) => string);
  /** Run input fields that replace the recorded runs' (limits, allowedTools, ...). */
  input?: ForkAgentRunOptions['input'];
  /** Read-only tools in the re-runs: run for real (default) or answered from the record. */
  readOnlyTools?: DryRunReadOnlyTools;
  /** Task queue of the re-runs (default: each recorded run's). */
  taskQueue?: string;
  /** The scorers, by name: each scores every re-run. */
  scorers: Record<string, EvalScorer>;
  /**
   * Minimum mean score per scorer, over the runs (a run that could not be re-run scores 0). A scorer without
   * a threshold must pass on every run.
   */
  thresholds?: Record<string, number>;
}

/** Codes of {@link EvalSuiteError}. */
export type EvalSuiteErrorCode = 'INVALID_SUITE';

/** An evaluation suite that cannot be run as given (the message lists what is wrong). */
export class EvalSuiteError extends DurableToolsError<EvalSuiteErrorCode> {
  override readonly name = 'EvalSuiteError';
  constructor(message: string, code: EvalSuiteErrorCode) {
    super(message, code);
  }
}

/** What is wrong with a value meant as an {@link EvalSuite} (empty when nothing is). */
export function evalSuiteProblems(value: unknown): string[] {
  if (!value || typeof value !== 'object') return ['a suite is an object with runs and scorers'];
  const suite = value as Record<string, unknown>;
  const problems: string[] = [];
  const runs = suite['runs'];
  const isIds = Array.isArray(runs) && runs.length > 0 && runs.every((id) => typeof id === 'string' && id !== '');
  const query =
    runs && typeof runs === 'object' && !Array.isArray(runs) ? (runs as Record<string, unknown>) : undefined;
  const isQuery =
    query !== undefined &&
    typeof query['query'] === 'string' &&
    query['query'] !== '' &&
    (query['limit'] === undefined || (Number.isInteger(query['limit']) && (query['limit'] as number) > 0));
  if (!isIds && !isQuery) problems.push('runs must be a non-empty array of workflow ids or { query, limit? }');
  const scorers = suite['scorers'];
  const names = scorers && typeof scorers === 'object' ? Object.keys(scorers) : [];
  if (names.length === 0) problems.push('scorers must be an object of at least one scoring function');
  for (const name of names) {
    if (typeof (scorers as Record<string, unknown>)[name] !== 'function')
      problems.push(`scorer ${name} is not a function`);
  }
  const thresholds = suite['thresholds'];
  if (thresholds !== undefined) {
    if (!thresholds || typeof thresholds !== 'object') problems.push('thresholds must be an object of numbers');
    else {
      for (const [name, threshold] of Object.entries(thresholds)) {
        if (!names.includes(name)) problems.push(`threshold ${name} names no scorer`);
        if (typeof threshold !== 'number' || !Number.isFinite(threshold))
          problems.push(`threshold ${name} is not a number`);
      }
    }
  }
  const readOnly = suite['readOnlyTools'];
  if (readOnly !== undefined && readOnly !== 'run' && readOnly !== 'record') {
    problems.push("readOnlyTools must be 'run' or 'record'");
  }
  return problems;
}
