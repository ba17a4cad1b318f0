import type { Client } from '@temporalio/client';
import type { RunStatus } from '../contract/agent-run-types';
import { AGENT_RUN_WORKFLOW, DRY_RUN_MEMO, waitForAgentRun } from './agent-run-client';
import { evalSuiteProblems, EvalSuiteError, type EvalScore, type EvalSuite } from './eval-suite';
import { forkAgentRun } from './fork-agent-run';
import { readRun } from './read-run';

/** Default number of recorded runs re-run at once. */
export const EVAL_DEFAULT_CONCURRENCY = 4;
/** Default number of runs a suite's visibility query takes. */
export const EVAL_DEFAULT_QUERY_LIMIT = 50;

/** Options of {@link evaluateAgentRuns}. */
export interface EvaluateAgentRunsOptions {
  /** Recorded runs re-run at once (default 4). */
  concurrency?: number;
  /** The suite's name when it has none (default `eval`). */
  name?: string;
  /** Told about each run once it is scored (for progress output). */
  onRun?: (run: EvalRunOutcome) => void;
}

/** One scorer's verdict on one re-run. */
export interface EvalCaseResult {
  scorer: string;
  score: number;
  pass: boolean;
  message?: string;
  /** Set when the scorer threw, or the run could not be re-run: the case counts as failed with score 0. */
  error?: string;
}

/** One recorded run, its dry re-run and their scores. */
export interface EvalRunOutcome {
  sourceId: string;
  /** The dry re-run's workflow id, once it started. */
  rerunId?: string;
  /** The dry re-run's status, once it ended. */
  status?: RunStatus;
  /** Why the run could not be re-run or read (every case of it is then an error). */
  error?: string;
  durationMs: number;
  cases: EvalCaseResult[];
}

/** One scorer over all runs, against its threshold. */
export interface EvalScorerSummary {
  name: string;
  /** Mean score over the runs (0 for a run that could not be re-run). */
  mean: number;
  threshold?: number;
  passedRuns: number;
  runs: number;
  /** mean ≥ threshold; without a threshold, every run passed. */
  passed: boolean;
}

/** What {@link evaluateAgentRuns} found. */
export interface EvalReport {
  suite: string;
  /** Some run was evaluated, every run could be re-run, and every scorer met its threshold. */
  passed: boolean;
  durationMs: number;
  runs: EvalRunOutcome[];
  scorers: EvalScorerSummary[];
  /** Dry runs the suite's query found: not evaluated. */
  skipped: string[];
}

/**
 * Evaluates the current model and tools on recorded runs: re-runs each run of the suite dry (`forkAgentRun`
 * with `fromStep: 1, dryRun`: no call with effects runs, each is answered from the recorded run or refused),
 * at most `concurrency` at once, scores each re-run with every scorer of the suite, and compares the mean
 * scores with the suite's thresholds. A run that cannot be read or re-run scores 0 in every scorer and fails the
 * report.
 * See docs/fork.md.
 *
 * @throws {@link EvalSuiteError} `INVALID_SUITE` when the suite is malformed (before anything starts).
 *
 * @example
 * ```ts
 * const report = await evaluateAgentRuns(client, {
 *   runs: ['agent-run-1', 'agent-run-2'],
 *   model: { provider: 'openai', model: 'gpt-4.1-mini' },
 *   scorers: { completes: ({ rerun }) => rerun.status === 'completed' },
 * });
 * process.exitCode = report.passed ? 0 : 1;
 * ```
 */
export async function evaluateAgentRuns(
  client: Client,
  suite: EvalSuite,
  options: EvaluateAgentRunsOptions = {},
): Promise<EvalReport> {
  const problems = evalSuiteProblems(suite);
  if (problems.length > 0)
    throw new EvalSuiteError(`The evaluation suite is malformed: ${problems.join('; ')}.`, 'INVALID_SUITE');
  const concurrency = options.concurrency ?? EVAL_DEFAULT_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new EvalSuiteError(`concurrency must be a whole number of at least 1 (got ${concurrency}).`, 'INVALID_SUITE');
  }
  const started = Date.now();
  const { ids, skipped } = await suiteRuns(client, suite);
  const runs = await inPool(ids, concurrency, async (id) => {
    const outcome = await evaluateRun(client, suite, id);
    options.onRun?.(outcome);
    return outcome;
  });
  const scorers = Object.keys(suite.scorers).map((name) => summarize(name, runs, suite.thresholds?.[name]));
  return {
    suite: suite.name ?? options.name ?? 'eval',
    passed: runs.length > 0 && runs.every((run) => run.error === undefined) && scorers.every((s) => s.passed),
    durationMs: Date.now() - started,
    runs,
    scorers,
    skipped,
  };
}

/** The suite's workflow ids: as listed, or what its query finds (dry runs left out). */
async function suiteRuns(client: Client, suite: EvalSuite): Promise<{ ids: string[]; skipped: string[] }> {
  if (Array.isArray(suite.runs)) return { ids: [...new Set(suite.runs as string[])], skipped: [] };
  const { query, limit = EVAL_DEFAULT_QUERY_LIMIT } = suite.runs as { query: string; limit?: number };
  const ids: string[] = [];
  const skipped: string[] = [];
  for await (const execution of client.workflow.list({
    query: `WorkflowType = '${AGENT_RUN_WORKFLOW}' AND (${query})`,
  })) {
    if (execution.memo?.[DRY_RUN_MEMO] !== undefined) skipped.push(execution.workflowId);
    else if (!ids.includes(execution.workflowId)) ids.push(execution.workflowId);
    if (ids.length >= limit) break;
  }
  return { ids, skipped };
}

/** Re-runs one recorded run dry and scores the re-run. */
async function evaluateRun(client: Client, suite: EvalSuite, sourceId: string): Promise<EvalRunOutcome> {
  const started = Date.now();
  const outcome: EvalRunOutcome = { sourceId, durationMs: 0, cases: [] };
  try {
    const { state: source } = await readRun(client, sourceId);
    if (!source) throw new Error(`the state of run ${sourceId} cannot be read (no worker answers its query)`);
    const model = typeof suite.model === 'function' ? suite.model(source) : suite.model;
    const goal = typeof suite.goal === 'function' ? suite.goal(source) : suite.goal;
    const handle = await forkAgentRun(client, sourceId, {
      fromStep: 1,
      dryRun: { readOnlyTools: suite.readOnlyTools ?? 'run' },
      ...(model ? { model } : {}),
      ...(goal !== undefined ? { goal } : {}),
      ...(suite.input ? { input: suite.input } : {}),
      ...(suite.taskQueue ? { taskQueue: suite.taskQueue } : {}),
    });
    outcome.rerunId = handle.workflowId;
    const rerun = await waitForAgentRun(handle);
    outcome.status = rerun.status;
    for (const [name, scorer] of Object.entries(suite.scorers)) {
      outcome.cases.push(await scoreCase(name, () => scorer({ source, rerun }), suite.thresholds?.[name]));
    }
  } catch (error) {
    outcome.error = error instanceof Error ? error.message : String(error);
    outcome.cases = Object.keys(suite.scorers).map((scorer) => ({
      scorer,
      score: 0,
      pass: false,
      error: `not evaluated: ${outcome.error}`,
    }));
  }
  outcome.durationMs = Date.now() - started;
  return outcome;
}

/** One scorer's verdict, normalized; a scorer that throws fails its case with the error. */
async function scoreCase(
  scorer: string,
  score: () => EvalScore | Promise<EvalScore>,
  threshold: number | undefined,
): Promise<EvalCaseResult> {
  let verdict: EvalScore;
  try {
    verdict = await score();
  } catch (error) {
    return {
      scorer,
      score: 0,
      pass: false,
      error: `the scorer threw: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  if (typeof verdict === 'boolean') return { scorer, score: verdict ? 1 : 0, pass: verdict };
  if (typeof verdict === 'number' && Number.isFinite(verdict)) {
    return { scorer, score: verdict, pass: verdict >= (threshold ?? 1) };
  }
  if (verdict && typeof verdict === 'object' && typeof verdict.score === 'number' && Number.isFinite(verdict.score)) {
    return {
      scorer,
      score: verdict.score,
      pass: typeof verdict.pass === 'boolean' ? verdict.pass : verdict.score >= (threshold ?? 1),
      ...(typeof verdict.message === 'string' ? { message: verdict.message } : {}),
    };
  }
  return { scorer, score: 0, pass: false, error: `the scorer returned ${JSON.stringify(verdict)}, not a score` };
}

function summarize(name: string, runs: readonly EvalRunOutcome[], threshold: number | undefined): EvalScorerSummary {
  const cases = runs.map((run) => run.cases.find((c) => c.scorer === name)!);
  const mean = cases.length === 0 ? 0 : cases.reduce((sum, c) => sum + c.score, 0) / cases.length;
  const passedRuns = cases.filter((c) => c.pass).length;
  return {
    name,
    mean,
    ...(threshold !== undefined ? { threshold } : {}),
    passedRuns,
    runs: cases.length,
    passed: threshold !== undefined ? mean >= threshold : passedRuns === cases.length,
  };
}

/** `work` over `items`, at most `limit` at once, results in the items' order. */
async function inPool<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}
