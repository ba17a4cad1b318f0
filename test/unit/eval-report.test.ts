/**
 * The reports of `durable-tools eval`: JUnit XML (read back with an XML parser that is not ours, as a CI
 * would) and the checks of a suite's shape. No server.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { evalSuiteProblems } from '../../src/client/eval-suite';
import type { EvalReport } from '../../src/client/evaluate-agent-runs';
import { junitXml } from '../../src/cli/junit-xml';
import { readJUnitReport } from '../support/junit-report';

const dir = mkdtempSync(join(tmpdir(), 'eval-report-'));

function report(message: string): EvalReport {
  return {
    suite: 'suite <"a" & \'b\'>',
    passed: false,
    durationMs: 1234,
    skipped: [],
    runs: [
      {
        sourceId: 'run-1',
        rerunId: 'run-2',
        status: 'completed',
        durationMs: 1000,
        cases: [{ scorer: 'exact', score: 0, pass: false, message }],
      },
      {
        sourceId: 'run-3',
        durationMs: 10,
        error: 'gone',
        cases: [{ scorer: 'exact', score: 0, pass: false, error: 'not evaluated: gone' }],
      },
    ],
    scorers: [{ name: 'exact', mean: 0, threshold: 0.5, passedRuns: 0, runs: 2, passed: false }],
  };
}

function parsed(message: string) {
  const path = join(dir, `${Math.random().toString(36).slice(2)}.xml`);
  writeFileSync(path, junitXml(report(message)));
  return readJUnitReport(path);
}

test('escapes markup in names and messages, so the document stays well formed', () => {
  const [cases] = parsed('expected <b> & "c", got \'d\'');
  expect(cases!.name).toBe('suite <"a" & \'b\'>');
  expect(cases!.cases[0]!.failure!.message).toBe('expected <b> & "c", got \'d\'');
});

test('keeps line breaks of a message attribute and replaces characters XML cannot hold', () => {
  const [cases] = parsed('line 1\nline 2 \u0001 \ud800 end');
  expect(cases!.cases[0]!.failure!.message).toBe('line 1\nline 2 \ufffd \ufffd end');
});

test('a run that could not be re-run is an error of each of its cases, counted apart from failures', () => {
  const [cases, thresholds] = parsed('wrong');
  expect(cases).toMatchObject({ tests: 2, failures: 1, errors: 1 });
  expect(cases!.cases[1]).toMatchObject({
    classname: 'suite <"a" & \'b\'>.run-3',
    error: { message: 'not evaluated: gone' },
  });
  expect(thresholds!.cases[0]!.failure!.type).toBe('threshold');
});

describe('the shape of a suite', () => {
  const scorers = { ok: () => true };

  test('a suite with run ids or a query and a scorer function is fine', () => {
    expect(evalSuiteProblems({ runs: ['a'], scorers })).toEqual([]);
    expect(evalSuiteProblems({ runs: { query: "WorkflowId = 'a'", limit: 3 }, scorers })).toEqual([]);
  });

  test('names every problem', () => {
    expect(
      evalSuiteProblems({ runs: [], scorers: { ok: 1 }, thresholds: { other: 'x' }, readOnlyTools: 'maybe' }),
    ).toEqual([
      'runs must be a non-empty array of workflow ids or { query, limit? }',
      'scorer ok is not a function',
      'threshold other names no scorer',
      'threshold other is not a number',
      "readOnlyTools must be 'run' or 'record'",
    ]);
  });
});
