import type { EvalReport } from '../client/evaluate-agent-runs';

/** Characters XML 1.0 does not allow at all (control characters other than tab, newline, return; lone surrogates). */
const NOT_XML =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Text as XML character data: escaped, characters XML cannot hold replaced by U+FFFD. */
export function xmlText(text: string): string {
  return text
    .replace(NOT_XML, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/** Text as an XML attribute value: as {@link xmlText}, with line breaks and tabs kept as character references. */
export function xmlAttribute(text: string): string {
  return xmlText(text).replace(/\n/g, '&#10;').replace(/\r/g, '&#13;').replace(/\t/g, '&#9;');
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

/**
 * The report as JUnit XML, as CI systems read it: one `<testsuite>` of the runs with one `<testcase>` per run ×
 * scorer (classname `<suite>.<workflow id>`, name the scorer; a failed case has a `<failure>`, a run that could not be
 * re-run or a scorer that threw an `<error>`), and one `<testsuite>` of the thresholds, one `<testcase>` per
 * scorer.
 */
export function junitXml(report: EvalReport): string {
  const cases = report.runs.flatMap((run) =>
    run.cases.map((c) => {
      const attributes = `classname="${xmlAttribute(`${report.suite}.${run.sourceId}`)}" name="${xmlAttribute(c.scorer)}" time="${seconds(run.durationMs / Math.max(1, run.cases.length))}"`;
      const detail = [
        `score ${c.score}`,
        run.rerunId ? `dry re-run ${run.rerunId} (${run.status ?? 'not ended'})` : undefined,
        c.message,
      ]
        .filter((line) => line !== undefined)
        .join('\n');
      if (c.error) {
        return `    <testcase ${attributes}>\n      <error message="${xmlAttribute(c.error)}" type="error">${xmlText(detail)}</error>\n    </testcase>`;
      }
      if (!c.pass) {
        const message = c.message ?? `score ${c.score}`;
        return `    <testcase ${attributes}>\n      <failure message="${xmlAttribute(message)}" type="score">${xmlText(detail)}</failure>\n    </testcase>`;
      }
      return `    <testcase ${attributes}/>`;
    }),
  );
  const failures = report.runs.flatMap((run) => run.cases).filter((c) => !c.pass && !c.error).length;
  const errors = report.runs.flatMap((run) => run.cases).filter((c) => c.error).length;
  const thresholds = report.scorers.map((scorer) => {
    const expected = scorer.threshold !== undefined ? `mean ≥ ${scorer.threshold}` : 'every run passes';
    const attributes = `classname="${xmlAttribute(`${report.suite}.thresholds`)}" name="${xmlAttribute(`${scorer.name} (${expected})`)}" time="0.000"`;
    if (scorer.passed) return `    <testcase ${attributes}/>`;
    const message = `${scorer.name}: mean ${scorer.mean.toFixed(3)}, ${scorer.passedRuns}/${scorer.runs} runs passed; expected ${expected}`;
    return `    <testcase ${attributes}>\n      <failure message="${xmlAttribute(message)}" type="threshold"/>\n    </testcase>`;
  });
  const thresholdFailures = report.scorers.filter((scorer) => !scorer.passed).length;
  const total = cases.length + thresholds.length;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${xmlAttribute(report.suite)}" tests="${total}" failures="${failures + thresholdFailures}" errors="${errors}" time="${seconds(report.durationMs)}">`,
    `  <testsuite name="${xmlAttribute(report.suite)}" tests="${cases.length}" failures="${failures}" errors="${errors}" skipped="0" time="${seconds(report.durationMs)}">`,
    ...cases,
    '  </testsuite>',
    `  <testsuite name="${xmlAttribute(`${report.suite} thresholds`)}" tests="${thresholds.length}" failures="${thresholdFailures}" errors="0" skipped="0" time="0.000">`,
    ...thresholds,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
