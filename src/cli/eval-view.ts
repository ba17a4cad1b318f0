import type { EvalReport } from '../client/evaluate-agent-runs';
import { preview, table } from './run-view';

/** Characters of a case's message in the table. */
const MESSAGE_CHARS = 40;

/**
 * The summary `eval` prints: a table of the runs (recorded run, dry re-run, its status, one column per scorer:
 * `pass 1` / `FAIL 0.4 why`), a table of the scorers against their thresholds, and the verdict.
 */
export function evalSummary(report: EvalReport): string {
  const scorers = report.scorers.map((scorer) => scorer.name);
  const runs = table(
    ['run', 'dry re-run', 'status', ...scorers],
    report.runs.map((run) => [
      run.sourceId,
      run.rerunId ?? '-',
      run.status ?? 'error',
      ...scorers.map((name) => {
        const c = run.cases.find((item) => item.scorer === name)!;
        const why = c.error ?? c.message;
        return `${c.pass ? 'pass' : 'FAIL'} ${round(c.score)}${why && !c.pass ? ` ${preview(why, MESSAGE_CHARS)}` : ''}`;
      }),
    ]),
  );
  const thresholds = table(
    ['scorer', 'mean', 'threshold', 'runs passed', 'result'],
    report.scorers.map((scorer) => [
      scorer.name,
      round(scorer.mean),
      scorer.threshold === undefined ? 'every run' : `≥ ${scorer.threshold}`,
      `${scorer.passedRuns}/${scorer.runs}`,
      scorer.passed ? 'pass' : 'FAIL',
    ]),
  );
  const skipped = report.skipped.length > 0 ? [`skipped ${report.skipped.length} dry run(s) the query found`] : [];
  const verdict =
    report.runs.length === 0
      ? `${report.suite}: no run to evaluate`
      : `${report.suite}: ${report.passed ? 'passed' : 'FAILED'} (${report.runs.length} run(s), ${(report.durationMs / 1000).toFixed(1)} s)`;
  return [runs, '', thresholds, '', ...skipped, verdict].join('\n');
}

function round(value: number): string {
  return String(Number(value.toFixed(3)));
}
