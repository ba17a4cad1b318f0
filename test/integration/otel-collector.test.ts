/**
 * Issue 50: checked against a real consumer. An OpenTelemetry Collector built from the collector's Go modules
 * (OTLP receiver, file exporter; test/support/otel-collector.ts) receives OTLP (http/protobuf, the SDK's default)
 * from a worker process and from the command line, both configured only by the standard OTEL_* variables. A user
 * starts a run with `durable-tools run`: its hotel booking fails once and is retried, its card payment waits for a
 * human, `durable-tools approve` approves it, the card is declined and the booking is compensated. The test reads
 * the trace back from the file the collector wrote: one trace from the command to the effect, the approval in it.
 *
 * Skipped, saying why, only where the collector is neither built nor buildable (no Go); CI builds it first
 * (`npm run install-collector`) and sets REQUIRE_OTEL_COLLECTOR=1, so there a missing collector fails.
 */
import type { Client } from '@temporalio/client';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getPendingApprovals } from '../../src/client/approval-client';
import { findGo } from '../../src/dev-server/go-build';
import { TOOL_CALL_SPAN_ATTRIBUTES as TOOL } from '../../src/telemetry/tool-call-telemetry';
import { RUN_SPANS } from '../../src/workflows/run-tracing';
import { declinedBookingScript } from '../support/collector-tools';
import { runCliToEnd, startCli, type CliProcess } from '../support/cli-process';
import { fastOtlpEnv, stopCli, testServerCliEnv, testServerClient, waitForWorkerStart } from '../support/cli-worker';
import {
  attribute,
  otelCollectorPath,
  OTEL_COLLECTOR_PATH_ENV,
  resolveOtelCollector,
  startOtelCollector,
  type CollectedSpan,
  type OtelCollector,
} from '../support/otel-collector';
import { uniqueTaskQueue } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

const available = Boolean(process.env[OTEL_COLLECTOR_PATH_ENV]) || existsSync(otelCollectorPath()) || Boolean(findGo());
if (!available && process.env.REQUIRE_OTEL_COLLECTOR === '1') {
  throw new Error(
    'REQUIRE_OTEL_COLLECTOR=1, but the collector is not built and Go was not found: npm run install-collector.',
  );
}
if (!available) {
  process.stderr.write(
    'otel-collector.test.ts skipped: the OpenTelemetry Collector is not built and Go was not found to build it ' +
      `(install Go and run \`npm run install-collector\`, or set ${OTEL_COLLECTOR_PATH_ENV}).\n`,
  );
}
const describeWithCollector = available ? describe : describe.skip;

const dir = mkdtempSync(join(tmpdir(), 'durable-tools-otelcol-'));
const taskQueue = uniqueTaskQueue('otel-collector');
const workflowId = `collector-run-${Date.now()}`;
let collector: OtelCollector;
let worker: CliProcess;
let client: Client;
let runExit: number;
let approveOutput: string;
let forkOutput: string;

/** The environment of every command: the test server, stores in a temporary directory, OTLP to the collector. */
function env(): NodeJS.ProcessEnv {
  return {
    ...testServerCliEnv(dir, taskQueue),
    DURABLE_TOOLS_AUDIT_STORE: 'sqlite',
    DURABLE_TOOLS_AUDIT_SQLITE_PATH: join(dir, 'audit.sqlite'),
    DURABLE_TOOLS_STREAM_STORE: 'off',
    ...fastOtlpEnv(collector.otlpHttpUrl),
  };
}

beforeAll(async () => {
  if (!available) return;
  // Built once per machine (minutes); cached afterwards, as CI's `npm run install-collector` leaves it.
  const executable = await resolveOtelCollector();
  collector = await startOtelCollector(executable!, dir);
  worker = startCli(['worker', '--tools', 'test/support/collector-tools.ts'], env());
  await waitForWorkerStart(worker);
  client = await testServerClient();
  const script = join(dir, 'turns.json');
  writeFileSync(script, JSON.stringify(declinedBookingScript));
  const input = join(dir, 'input.json');
  // Regular activities: each call its own activity and attempt spans (docs/fast-path.md, trade-offs).
  writeFileSync(input, JSON.stringify({ failurePolicy: { criticalTools: ['charge_card'] }, fastPath: false }));
  const run = startCli(
    ['run', 'Book and pay', '--script', script, '--input', input, '--id', workflowId, '--no-stream'],
    env(),
  );
  await waitFor('the card payment to wait for approval', async () => {
    if (run.child.exitCode !== null) throw new Error(`run exited:\n${run.stdout()}\n${run.stderr()}`);
    const pending = await getPendingApprovals(client, workflowId).catch(() => []);
    return pending.some((call) => call.tool === 'charge_card');
  });
  const approve = await runCliToEnd(['approve', workflowId, '--yes', '--approver', 'operator'], env());
  approveOutput = `${approve.stdout}${approve.stderr}`;
  runExit = await run.exited;
  const fork = await runCliToEnd(['fork', workflowId, '--dry-run', '--id', `${workflowId}-fork`], env());
  forkOutput = `${fork.stdout}${fork.stderr}`;
}, 15 * 60_000);

afterAll(async () => {
  await stopCli(worker);
  await client?.connection.close();
  await collector?.stop();
});

/** The spans of the run's trace at the collector, once the named ones have arrived. */
async function traceWith(...names: string[]): Promise<CollectedSpan[]> {
  return waitFor(`spans ${names.join(', ')} at the collector`, () => {
    const spans = collector.spans();
    const root = spans.find((span) => span.name === 'durable-tools run');
    const trace = root ? spans.filter((span) => span.traceId === root.traceId) : [];
    return names.every((name) => trace.some((span) => span.name === name)) && trace;
  });
}

const named = (spans: CollectedSpan[], name: string) => spans.filter((span) => span.name === name);
function one(spans: CollectedSpan[], name: string): CollectedSpan {
  const found = named(spans, name);
  if (found.length !== 1) throw new Error(`expected one span "${name}", found ${found.length}`);
  return found[0]!;
}
const parentOf = (spans: CollectedSpan[], span: CollectedSpan) =>
  spans.find((candidate) => span.parentSpanId && candidate.spanId === span.parentSpanId);
/** Whether `ancestor` is above `span` in the tree (any number of levels). */
function isBelow(spans: CollectedSpan[], span: CollectedSpan, ancestor: CollectedSpan): boolean {
  for (let current = parentOf(spans, span); current; current = parentOf(spans, current)) {
    if (current.spanId === ancestor.spanId) return true;
  }
  return false;
}
const attr = (span: CollectedSpan, key: string) => attribute(span.attributes, key);
const STATUS_ERROR = 2;

const EXPECTED = [
  'durable-tools run',
  'StartWorkflow:agentRun',
  'RunWorkflow:agentRun',
  `${RUN_SPANS.toolCall} book_hotel`,
  `${RUN_SPANS.toolCall} charge_card`,
  `${RUN_SPANS.compensation} cancel_hotel`,
  'durable-tools approve',
  'StartWorkflowUpdate:decideApproval',
];

describeWithCollector(
  'a CLI-started run with a retry, an approval and a compensation, read back from a collector',
  () => {
    test('the run ends compensated (run exits 3) after the approval', () => {
      expect(approveOutput).toMatch(/Approved by operator/);
      expect(runExit).toBe(3);
    });

    test('is one trace whose root is the `run` command, the CLI and the worker each under their service name', async () => {
      const spans = await traceWith(...EXPECTED);
      const root = one(spans, 'durable-tools run');
      expect(root.parentSpanId ?? '').toBe('');
      expect(root.service).toBe('durable-tools-cli');
      const start = one(spans, 'StartWorkflow:agentRun');
      expect(parentOf(spans, start)?.spanId).toBe(root.spanId);
      const run = one(spans, 'RunWorkflow:agentRun');
      expect(parentOf(spans, run)?.spanId).toBe(start.spanId);
      expect(run.service).toBe('durable-tools-worker');
    });

    test('the approval is a span of the run: `approve` parented in its trace, its update handled below it', async () => {
      const spans = await traceWith(...EXPECTED, 'HandleUpdate:decideApproval');
      const approve = one(spans, 'durable-tools approve');
      expect(approve.service).toBe('durable-tools-cli');
      expect(parentOf(spans, approve)?.name).toBe('StartWorkflow:agentRun');
      expect(attr(approve, 'durable_tools.workflow_id')).toBe(workflowId);
      expect(attr(approve, 'durable_tools.decision')).toBe('approved');
      expect(attr(approve, 'durable_tools.tool')).toBe('charge_card');
      const update = one(spans, 'StartWorkflowUpdate:decideApproval');
      expect(parentOf(spans, update)?.spanId).toBe(approve.spanId);
      const handled = named(spans, 'HandleUpdate:decideApproval');
      expect(handled.length).toBeGreaterThanOrEqual(1);
      for (const span of handled) expect(parentOf(spans, span)?.spanId).toBe(update.spanId);
    });

    test('the retried call is one step span with one attempt span per attempt, each with its outcome', async () => {
      const spans = await traceWith(...EXPECTED);
      const run = one(spans, 'RunWorkflow:agentRun');
      const step = one(spans, `${RUN_SPANS.toolCall} book_hotel`);
      expect(isBelow(spans, step, run)).toBe(true);
      const attempts = named(spans, 'RunActivity:book_hotel')
        .filter((span) => isBelow(spans, span, step))
        .sort((a, b) => Number(attr(a, TOOL.attempt)) - Number(attr(b, TOOL.attempt)));
      expect(attempts.map((span) => attr(span, TOOL.outcome))).toEqual(['retrying', 'succeeded']);
      expect(attr(attempts[0]!, TOOL.classification)).toBe('transient');
      expect(attr(attempts[0]!, TOOL.errorCode)).toBe('UNAVAILABLE');
    });

    test('the declined card is a failed step; the compensation of the booking is linked to the step it undoes', async () => {
      const spans = await traceWith(...EXPECTED);
      const run = one(spans, 'RunWorkflow:agentRun');
      const charge = one(spans, `${RUN_SPANS.toolCall} charge_card`);
      const [attempt] = named(spans, 'RunActivity:charge_card').filter((span) => isBelow(spans, span, charge));
      expect(attr(attempt!, TOOL.outcome)).toBe('failed');
      expect(attr(attempt!, TOOL.classification)).toBe('permanent');
      const compensation = one(spans, `${RUN_SPANS.compensation} cancel_hotel`);
      expect(isBelow(spans, compensation, run)).toBe(true);
      const booking = one(spans, `${RUN_SPANS.toolCall} book_hotel`);
      expect(compensation.links?.map((link) => link.spanId)).toContain(booking.spanId);
      expect(attr(run, RUN_SPANS.attributes.runStatus)).toBe('compensated');
    });

    test('`fork` starts a new trace, linked to the start of the run it forks', async () => {
      expect(forkOutput).toMatch(/Dry run .* started/);
      const source = one(await traceWith(...EXPECTED), 'StartWorkflow:agentRun');
      const spans = await waitFor('the fork command span at the collector', () => {
        const all = collector.spans();
        return all.some((span) => span.name === 'durable-tools fork') && all;
      });
      const fork = one(spans, 'durable-tools fork');
      expect(fork.traceId).not.toBe(source.traceId);
      expect(fork.parentSpanId ?? '').toBe('');
      expect(fork.links?.map((link) => [link.traceId, link.spanId])).toEqual([[source.traceId, source.spanId]]);
      const start = spans.find((span) => span.name === 'StartWorkflow:agentRun' && span.parentSpanId === fork.spanId);
      expect(attr(start!, 'temporalWorkflowId')).toBe(`${workflowId}-fork`);
    });

    test('no argument value reaches any span', async () => {
      const spans = await traceWith(...EXPECTED);
      const text = JSON.stringify(spans);
      expect(text).not.toContain('Adlon');
      expect(text).not.toContain('99999');
    });

    test("the engine's metrics arrive at the collector", async () => {
      // Cumulative sums: a later export carries every tool called so far.
      const calls = await waitFor('durable_tools.tool.calls of the three tools at the collector', () => {
        const exported = collector.metrics().filter((m) => m.name === 'durable_tools.tool.calls');
        const tools = new Set(exported.flatMap((m) => m.points.map((point) => attribute(point.attributes, 'tool'))));
        return ['book_hotel', 'charge_card', 'cancel_hotel'].every((tool) => tools.has(tool)) && exported;
      });
      expect(new Set(calls.map((m) => m.service))).toEqual(new Set(['durable-tools-worker']));
      const tools = calls.flatMap((m) => m.points.map((point) => attribute(point.attributes, 'tool')));
      expect(tools).toEqual(expect.arrayContaining(['book_hotel', 'charge_card', 'cancel_hotel']));
    });

    describe('GenAI semantic conventions (the gen_ai.* names o1 emits, docs/telemetry.md)', () => {
      test('the run is an invoke_agent span, failed with the run status as error.type', async () => {
        const spans = await traceWith(...EXPECTED);
        const run = one(spans, 'RunWorkflow:agentRun');
        const agent = spans.find((span) => span.name.startsWith('invoke_agent') && isBelow(spans, span, run));
        expect(agent).toBeDefined();
        expect(attr(agent!, 'gen_ai.operation.name')).toBe('invoke_agent');
        expect(attr(agent!, 'gen_ai.provider.name')).toBe('scripted');
        expect(attr(agent!, 'error.type')).toBe('compensated');
        expect(agent!.status?.code).toBe(STATUS_ERROR);
      });

      test('each model call is a chat span with the operation and the provider', async () => {
        const spans = await traceWith(...EXPECTED);
        const chats = spans.filter((span) => span.name === 'chat' || span.name.startsWith('chat '));
        expect(chats.length).toBeGreaterThanOrEqual(2);
        for (const chat of chats) {
          expect(attr(chat, 'gen_ai.operation.name')).toBe('chat');
          expect(attr(chat, 'gen_ai.provider.name')).toBe('scripted');
        }
      });

      test('tool steps are execute_tool spans; the failed one has error.type and status ERROR', async () => {
        const spans = await traceWith(...EXPECTED);
        const booking = one(spans, `${RUN_SPANS.toolCall} book_hotel`);
        expect(attr(booking, 'gen_ai.operation.name')).toBe('execute_tool');
        expect(attr(booking, 'gen_ai.tool.name')).toBe('book_hotel');
        expect(attr(booking, 'gen_ai.tool.type')).toBe('function');
        expect(attr(booking, 'gen_ai.tool.call.id')).toEqual(expect.any(String));
        const charge = one(spans, `${RUN_SPANS.toolCall} charge_card`);
        expect(attr(charge, 'error.type')).toBe('PERMISSION_DENIED');
        expect(charge.status?.code).toBe(STATUS_ERROR);
        const [firstAttempt] = named(spans, 'RunActivity:book_hotel').filter((span) => attr(span, TOOL.attempt) === 1);
        expect(attr(firstAttempt!, 'error.type')).toEqual(expect.any(String));
      });

      test('the GenAI client operation duration arrives in seconds', async () => {
        const metric = await waitFor('gen_ai.client.operation.duration at the collector', () =>
          collector.metrics().find((m) => m.name === 'gen_ai.client.operation.duration'),
        );
        expect(metric.unit).toBe('s');
        expect(metric.points.map((point) => attribute(point.attributes, 'gen_ai.operation.name'))).toContain('chat');
      });
    });
  },
);
