import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { PendingCompensation, StepRecord } from '../../src/contract/agent-run-types';
import { traceToolStep } from '../../src/workflows/run-tracing';

function step(): StepRecord {
  return {
    stepId: 1,
    turn: 1,
    toolCallId: 'call_1',
    tool: 'pay',
    arguments: {},
    idempotencyKey: 'wf/run/1',
    status: 'succeeded',
  };
}

function owed(): PendingCompensation {
  return { stepId: 1, tool: 'pay', undo: 'refund', arguments: {}, idempotencyKey: 'wf/run/1' };
}

afterEach(() => trace.disable());

test('a tool step runs without a span when no tracer provider is registered', async () => {
  const compensation = owed();
  let activeInside: unknown = 'unset';
  const record = await traceToolStep('pay', [compensation], async () => {
    activeInside = trace.getActiveSpan();
    return step();
  });
  expect(record.stepId).toBe(1);
  expect(activeInside).toBeUndefined();
  expect(compensation.span).toBeUndefined();
});

test('a tool step runs inside its span when a tracer provider is registered', async () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider();
  provider.addSpanProcessor(new SimpleSpanProcessor(exporter));
  trace.setGlobalTracerProvider(provider);
  const compensation = owed();
  await traceToolStep('pay', [compensation], async () => step());
  const [span] = exporter.getFinishedSpans();
  expect(span?.name).toBe('execute_tool pay');
  expect(span?.attributes['durable_tools.idempotency_key']).toBe('wf/run/1');
  expect(compensation.span?.spanId).toBe(span?.spanContext().spanId);
});
