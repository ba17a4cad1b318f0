/**
 * Issue 25, part 4 ("evaluate") on the real dev server: three recorded runs book and charge on the test ledger;
 * `durable-tools eval` re-runs them dry against a suite's model, scores the re-runs, writes JUnit XML (read here
 * with an XML parser that is not ours, as a CI would) and JSON, and exits by the suite's thresholds. No eval adds
 * an effect to the ledger.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { evaluateAgentRuns, type EvalReport } from '../../src/client/evaluate-agent-runs';
import { forkAgentRun } from '../../src/client/fork-agent-run';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import { MemoryIdempotencyStore } from '../../src/stores/idempotency/memory-idempotency-store';
import { defineTool } from '../../src/tools/define-tool';
import { callTurn, scriptedRun } from '../support/agent-runs';
import { runCliInProcess, testServerCliEnv, withProcessEnv } from '../support/cli-in-process';
import { readJUnitReport } from '../support/junit-report';
import { startLedgerServer, type LedgerServer } from '../support/ledger-server';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { chargeCardTool, tripLedgerTools } from '../support/trip-ledger-tools';

let ledger: LedgerServer;
const taskQueue = uniqueTaskQueue('eval');

/** The read-only `slow_lookup`: counts the calls in flight, and holds each until two are, or all three came. */
const lookups = { started: 0, inFlight: 0, maxInFlight: 0, waiters: [] as Array<() => void> };
const slowLookup = defineTool({
  name: 'slow_lookup',
  description: 'Looks something up, slowly.',
  input: z.object({}),
  output: z.object({ ok: z.boolean() }),
  effect: 'read-only',
  idempotent: true,
}).implement(async () => {
  lookups.started += 1;
  lookups.inFlight += 1;
  lookups.maxInFlight = Math.max(lookups.maxInFlight, lookups.inFlight);
  if (lookups.inFlight >= 2 || lookups.started >= TRIPS.length) for (const wake of lookups.waiters.splice(0)) wake();
  else await new Promise<void>((resolve) => lookups.waiters.push(resolve));
  lookups.inFlight -= 1;
  return { ok: true };
});

const temporal = useTestTemporal({
  worker: async (temporal) => {
    ledger = await startLedgerServer();
    return createTestWorker(temporal, {
      tools: [...tripLedgerTools(ledger), chargeCardTool(ledger), slowLookup],
      taskQueue,
      idempotencyStore: new MemoryIdempotencyStore(),
    });
  },
});
afterAll(async () => {
  await ledger.close();
});

const TRIPS = [
  { to: 'BER', amount: 100 },
  { to: 'PAR', amount: 200 },
  { to: 'ROM', amount: 300 },
];
const recorded: string[] = [];
let effectsRecorded: number;
const dir = mkdtempSync(join(tmpdir(), 'eval-'));

beforeAll(async () => {
  for (const trip of TRIPS) {
    const script: ScriptedTurn[] = [
      callTurn('book_flight', { to: trip.to }),
      callTurn('charge_card', { amount: trip.amount }),
      { text: `Booked ${trip.to}.`, final: true },
    ];
    const handle = await startAgentRun(temporal.client, scriptedRun(`Book a trip to ${trip.to}`, script), {
      taskQueue,
    });
    expect((await waitForAgentRun(handle)).status).toBe('completed');
    recorded.push(handle.workflowId);
  }
  effectsRecorded = ledger.effects.length;
});

/**
 * A suite module (TypeScript) over the recorded runs. Its model replays each run's calls, the charge multiplied
 * by `chargeFactor` on runs whose charge is at least `changeFrom`; two scorers and the given thresholds.
 */
function writeSuite(name: string, options: { chargeFactor: number; changeFrom: number; thresholds: string }): string {
  const path = join(dir, `${name}.ts`);
  writeFileSync(
    path,
    `
type Step = { tool: string; arguments: unknown };
type Run = { status: string; answer?: string; steps: Step[] & Array<{ dryRun?: { answer: string }; observation?: { status: string; code?: string } }> };

/** The "current model": the recorded calls again, with another amount for large charges. */
function model(source: Run) {
  const turns = source.steps.map((step) => {
    const args = step.arguments as { amount?: number };
    const changed = step.tool === 'charge_card' && (args.amount ?? 0) >= ${options.changeFrom};
    return { toolCalls: [{ name: step.tool, arguments: changed ? { amount: args.amount! * ${options.chargeFactor} } : args }] };
  });
  return { provider: 'scripted', script: [...turns, { text: source.answer ?? 'Done.', final: true }] };
}

export const suite = {
  runs: ${JSON.stringify(recorded)},
  model,
  scorers: {
    completes: ({ rerun }: { rerun: Run }) => rerun.status === 'completed',
    answered_from_record: ({ rerun }: { rerun: Run }) => {
      const refused = rerun.steps.filter((step) => step.dryRun?.answer === 'refused');
      return refused.length === 0
        ? { score: 1 }
        : { score: 0, message: 'refused <' + refused.map((s) => s.observation?.code).join(',') + '> & not run' };
    },
  },
  thresholds: ${options.thresholds},
};
`,
  );
  return path;
}

describe('an eval suite of three recorded runs whose model makes the same calls', () => {
  let run: { code: number; stdout: string; stderr: string };
  const junit = join(dir, 'same.xml');
  const json = join(dir, 'same.json');
  beforeAll(async () => {
    const suite = writeSuite('same-calls', { chargeFactor: 1, changeFrom: 0, thresholds: '{ completes: 1 }' });
    run = await cli(['eval', suite, '--concurrency', '2', '--junit', junit, '--json', json]);
  });

  test('exits 0: every threshold is met', () => {
    expect(run.stderr).not.toContain('error');
    expect(run.code).toBe(0);
  });

  test('writes JUnit XML a CI reads: one passing testcase per run and scorer, one per threshold', () => {
    const [cases, thresholds] = readJUnitReport(junit);
    expect(cases).toMatchObject({ name: 'same-calls', tests: 6, failures: 0, errors: 0 });
    expect(cases!.cases.map((c) => [c.classname, c.name])).toEqual(
      recorded.flatMap((id) => [
        [`same-calls.${id}`, 'completes'],
        [`same-calls.${id}`, 'answered_from_record'],
      ]),
    );
    expect(cases!.cases.every((c) => c.failure === undefined && c.error === undefined)).toBe(true);
    expect(thresholds).toMatchObject({ name: 'same-calls thresholds', tests: 2, failures: 0 });
  });

  test('writes the report as JSON, with each dry re-run', () => {
    const report = JSON.parse(readFileSync(json, 'utf8')) as EvalReport;
    expect(report.passed).toBe(true);
    expect(report.runs.map((r) => [r.sourceId, r.status])).toEqual(recorded.map((id) => [id, 'completed']));
    expect(report.scorers.map((s) => [s.name, s.mean, s.passed])).toEqual([
      ['completes', 1, true],
      ['answered_from_record', 1, true],
    ]);
  });

  test('prints a table of runs and scorers and the verdict', () => {
    expect(run.stdout).toMatch(/run\s+dry re-run\s+status\s+completes\s+answered_from_record/);
    expect(run.stdout).toContain('same-calls: passed (3 run(s)');
  });

  test('adds no effect to the ledger', () => {
    expect(ledger.effects.length).toBe(effectsRecorded);
  });
});

describe('an eval suite whose model changes one charge of three, below its threshold', () => {
  let run: { code: number; stdout: string; stderr: string };
  const junit = join(dir, 'changed.xml');
  beforeAll(async () => {
    const suite = writeSuite('changed-charge', {
      chargeFactor: 2,
      changeFrom: 300,
      thresholds: '{ answered_from_record: 0.9 }',
    });
    run = await cli(['eval', suite, '--junit', junit]);
  });

  test('exits 1: the mean of answered_from_record is 2/3, under 0.9', () => {
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('changed-charge: FAILED');
  });

  test('reports the failed case in JUnit with its message, escaped, and the threshold as a failure', () => {
    const [cases, thresholds] = readJUnitReport(junit);
    expect(cases).toMatchObject({ tests: 6, failures: 1, errors: 0 });
    const failed = cases!.cases.filter((c) => c.failure);
    expect(failed).toEqual([
      {
        classname: `changed-charge.${recorded[2]}`,
        name: 'answered_from_record',
        failure: {
          message: 'refused <DRY_RUN_NO_RECORD> & not run',
          type: 'score',
          text: expect.stringContaining('score 0'),
        },
      },
    ]);
    expect(thresholds).toMatchObject({ tests: 2, failures: 1 });
    expect(thresholds!.cases.map((c) => [c.name, c.failure?.message])).toEqual([
      ['completes (every run passes)', undefined],
      ['answered_from_record (mean ≥ 0.9)', expect.stringContaining('answered_from_record: mean 0.667')],
    ]);
  });

  test('adds no effect to the ledger: the changed charge was refused, not run', () => {
    expect(ledger.effects.length).toBe(effectsRecorded);
  });
});

test('exits 2 for a suite module without scorers', async () => {
  const path = join(dir, 'no-scorers.ts');
  writeFileSync(path, `export const suite = { runs: ['a'] };\n`);
  const { code, stderr } = await cli(['eval', path]);
  expect(stderr).toContain('scorers must be an object of at least one scoring function');
  expect(code).toBe(2);
});

test('evaluateAgentRuns takes the runs of a visibility query and leaves out the dry runs it finds', async () => {
  const dry = await forkAgentRun(temporal.client, recorded[0]!, { fromStep: 1, dryRun: true });
  await waitForAgentRun(dry);
  const query = `WorkflowId = '${recorded[0]}' OR WorkflowId = '${dry.workflowId}'`;
  let report: EvalReport;
  do {
    // Visibility is eventually consistent: ask until the listing has both runs.
    report = await evaluateAgentRuns(temporal.client, {
      runs: { query },
      scorers: { completes: ({ rerun }) => rerun.status === 'completed' },
    });
    if (report.runs.length + report.skipped.length < 2) await new Promise((resolve) => setTimeout(resolve, 200));
  } while (report.runs.length + report.skipped.length < 2);
  expect(report.runs.map((r) => r.sourceId)).toEqual([recorded[0]]);
  expect(report.skipped).toEqual([dry.workflowId]);
  expect(report.passed).toBe(true);
});

test('a run that cannot be re-run fails the report, even when the thresholds are met', async () => {
  const report = await evaluateAgentRuns(temporal.client, {
    runs: [recorded[0]!, `${taskQueue}-no-such-run`],
    scorers: { completes: ({ rerun }) => rerun.status === 'completed' },
    thresholds: { completes: 0.5 },
  });
  expect(report.scorers[0]).toMatchObject({ mean: 0.5, passed: true });
  expect(report.runs[1]).toMatchObject({ error: expect.stringContaining('no-such-run') });
  expect(report.runs[1]!.cases[0]).toMatchObject({
    score: 0,
    pass: false,
    error: expect.stringContaining('not evaluated'),
  });
  expect(report.passed).toBe(false);
});

test('re-runs at most `concurrency` runs at once', async () => {
  const report = await evaluateAgentRuns(
    temporal.client,
    {
      runs: recorded,
      model: { provider: 'scripted', script: [callTurn('slow_lookup'), { text: 'Looked.', final: true }] },
      scorers: { completes: ({ rerun }) => rerun.status === 'completed' },
    },
    { concurrency: 2 },
  );
  expect(report.passed).toBe(true);
  expect(lookups.started).toBe(3);
  // Two re-runs were in their lookup at once, never three.
  expect(lookups.maxInFlight).toBe(2);
});

/** The command line against the test server. */
function cli(argv: string[]) {
  return withProcessEnv(testServerCliEnv(dir), () => runCliInProcess(argv));
}
