import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import type { WorkflowSpanInfo } from '../../src/telemetry/lean-workflow-spans';
import { declinedBookingScript as script, declinedBookingTools } from '../support/collector-tools';
import { inMemoryTracing } from '../support/in-memory-telemetry';
import { spanBytes, type SpanBytes } from '../support/span-bytes';
import { useTestTemporal, uniqueTaskQueue } from '../support/temporal-test-env';
import { createTracedClient, createTracedWorker } from '../support/traced-worker';

/**
 * Issue 50, lean spans: the bytes of one traced run's spans, as an OTLP exporter sends them, with Temporal's
 * workflow span exporter copying every WorkflowInfo field onto the workflow spans (`workflowInfo: 'all'`) and with
 * the lean exporter (the default). The run: a retried booking, a declined card, the booking compensated. The
 * numbers are printed and written in docs/telemetry.md.
 */

const tools = declinedBookingTools('never');

const temporal = useTestTemporal();

/** The spans of one traced run on a worker whose workflow spans carry `workflowInfo`. */
async function tracedRun(workflowInfo: WorkflowSpanInfo): Promise<ReadableSpan[]> {
  const tracing = inMemoryTracing();
  const taskQueue = uniqueTaskQueue(`span-bytes-${workflowInfo}`);
  const worker = await createTracedWorker(temporal, tracing, { tools, taskQueue, workflowInfo });
  const client = await createTracedClient(temporal, tracing);
  const result = await worker.runUntil(async () => {
    const input = {
      goal: 'Book and pay',
      model: { provider: 'scripted', script },
      agentName: 'booking_agent',
      failurePolicy: { criticalTools: ['charge_card'] },
      fastPath: false,
    };
    return waitForAgentRun(await startAgentRun(client, input, { taskQueue }));
  });
  expect(result.status).toBe('compensated');
  return tracing.spans();
}

/** Spans the workflow created in its sandbox (exported through the sink): they carry `workflowType`. */
const workflowSpans = (spans: ReadableSpan[]) => spans.filter((span) => span.attributes.workflowType !== undefined);

let all: ReadableSpan[];
let lean: ReadableSpan[];

beforeAll(async () => {
  all = await tracedRun('all');
  lean = await tracedRun('lean');
  const report = (name: string, bytes: SpanBytes, workflow: SpanBytes) =>
    `${name}: ${bytes.spans} spans, ${bytes.protobuf} B protobuf / ${bytes.json} B JSON; ` +
    `workflow spans ${workflow.spans}: ${workflow.protobuf} B protobuf / ${workflow.json} B JSON`;
  console.log(
    [
      report('all WorkflowInfo fields', spanBytes(all), spanBytes(workflowSpans(all))),
      report('lean (default)', spanBytes(lean), spanBytes(workflowSpans(lean))),
    ].join('\n'),
  );
});

describe('the span bytes of a traced run', () => {
  test('both runs export the same spans', () => {
    expect(lean.map((span) => span.name).sort()).toEqual(all.map((span) => span.name).sort());
  });

  test('copying every WorkflowInfo field puts nested values (memo, search attributes) on the workflow spans', () => {
    const [run] = all.filter((span) => span.name === 'RunWorkflow:agentRun');
    expect(run?.attributes).toHaveProperty('searchAttributes');
    expect(
      Object.values(run?.attributes ?? {}).some((value) => typeof value === 'object' && !Array.isArray(value)),
    ).toBe(true);
  });

  test('the lean workflow spans carry no nested value', () => {
    for (const span of workflowSpans(lean)) {
      const nested = Object.entries(span.attributes).filter(([, v]) => typeof v === 'object' && !Array.isArray(v));
      expect(nested).toEqual([]);
    }
  });

  test('the lean run exports fewer bytes, in either OTLP encoding', () => {
    expect(spanBytes(lean).protobuf).toBeLessThan(spanBytes(all).protobuf);
    expect(spanBytes(lean).json).toBeLessThan(spanBytes(all).json);
  });
});
