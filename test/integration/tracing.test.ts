import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import { GEN_AI_ATTRIBUTES as GEN_AI, GEN_AI_METRICS } from '../../src/contract/gen-ai-conventions';
import { ENGINE_METRICS } from '../../src/telemetry/engine-metrics';
import { WORKFLOW_SPAN_INFO_FIELDS } from '../../src/telemetry/lean-workflow-spans';
import { TOOL_CALL_SPAN_ATTRIBUTES as TOOL } from '../../src/telemetry/tool-call-telemetry';
import { defineTool } from '../../src/tools/define-tool';
import type { AgentRunResult } from '../../src/contract/agent-run-types';
import { RUN_SPANS } from '../../src/workflows/run-tracing';
import { declinedBookingTools } from '../support/collector-tools';
import { inMemoryMetrics, inMemoryTracing } from '../support/in-memory-telemetry';
import { useTestTemporal, uniqueTaskQueue } from '../support/temporal-test-env';
import { createTracedClient, createTracedWorker } from '../support/traced-worker';

/**
 * Issue 15, tracing and metrics, on the real dev server: a run books a hotel (its first attempt fails
 * transiently and is retried), then its card is declined, so the booking is compensated. The worker bundles
 * the workflows with Temporal's OpenTelemetry interceptors and exports into an in-memory span exporter.
 */

const tools = [
  ...declinedBookingTools('never'),
  defineTool({
    name: 'lookup_rate',
    description: 'Looks up a nightly rate.',
    input: z.object({ nights: z.number() }),
    output: z.object({ rate: z.number() }),
    effect: 'read-only',
  }).implement(async () => ({ rate: 120 })),
];

const script: ScriptedTurn[] = [
  { toolCalls: [{ name: 'book_hotel', arguments: { hotel: 'Adlon' } }] },
  // Arguments its schema refuses: the tool's activity refuses the call in its first attempt.
  { toolCalls: [{ name: 'lookup_rate', arguments: { nights: 'three' } }] },
  { toolCalls: [{ name: 'charge_card', arguments: { amountCents: 99_999 } }] },
  { text: 'done', final: true },
];

const temporal = useTestTemporal();
const tracing = inMemoryTracing();
const metrics = inMemoryMetrics();
let result: AgentRunResult;

beforeAll(async () => {
  const taskQueue = uniqueTaskQueue('tracing');
  const worker = await createTracedWorker(temporal, tracing, {
    tools,
    taskQueue,
    meterProvider: metrics.meterProvider,
  });
  const client = await createTracedClient(temporal, tracing);
  result = await worker.runUntil(async () => {
    const handle = await startAgentRun(
      client,
      {
        goal: 'Book and pay',
        model: { provider: 'scripted', script },
        agentName: 'booking_agent',
        failurePolicy: { criticalTools: ['charge_card'] },
        // Regular activities: each call and turn its own activity span (docs/fast-path.md, trade-offs: a call
        // fused into its turn's local activity has no activity span of its own).
        fastPath: false,
      },
      { taskQueue },
    );
    return waitForAgentRun(handle);
  });
});

const named = (name: string) => tracing.spans().filter((span) => span.name === name);
const one = (name: string): ReadableSpan => {
  const found = named(name);
  if (found.length !== 1) throw new Error(`expected one span "${name}", found ${found.length}`);
  return found[0]!;
};
const childrenOf = (parent: ReadableSpan) =>
  tracing.spans().filter((span) => span.parentSpanId === parent.spanContext().spanId);
const childNamed = (parent: ReadableSpan, name: string) => childrenOf(parent).filter((span) => span.name === name);
const agentSpan = () => one('invoke_agent booking_agent');
const attemptSpans = (call: ReadableSpan, tool: string) => {
  const [start] = childNamed(call, `StartActivity:${tool}`);
  return childNamed(start!, `RunActivity:${tool}`);
};

describe('a traced run with a retry and a compensation', () => {
  test('the run ends compensated', () => {
    expect(result.status).toBe('compensated');
  });

  test('every span of the run is in the trace the client started', () => {
    const start = one('StartWorkflow:agentRun');
    const traceIds = new Set(tracing.spans().map((span) => span.spanContext().traceId));
    expect([...traceIds]).toEqual([start.spanContext().traceId]);
    expect(childNamed(start, 'RunWorkflow:agentRun')).toHaveLength(1);
  });

  test('the run span carries the status the run ended with', () => {
    expect(one('RunWorkflow:agentRun').attributes[RUN_SPANS.attributes.runStatus]).toBe('compensated');
  });

  test("the agent's invocation is an invoke_agent span of the run, named after the agent", () => {
    expect(agentSpan().parentSpanId).toBe(one('RunWorkflow:agentRun').spanContext().spanId);
    expect(agentSpan().attributes).toMatchObject({
      [GEN_AI.operationName]: 'invoke_agent',
      [GEN_AI.agentName]: 'booking_agent',
      [GEN_AI.providerName]: 'scripted',
    });
  });

  test('the invocation of a run that ended compensated has status ERROR and error.type compensated', () => {
    expect(agentSpan().status.code).toBe(SpanStatusCode.ERROR);
    expect(agentSpan().attributes[GEN_AI.errorType]).toBe('compensated');
  });

  test('each model turn is a span of the invocation, above its model activity', () => {
    const turns = childNamed(agentSpan(), RUN_SPANS.modelTurn);
    expect(turns.map((span) => span.attributes[RUN_SPANS.attributes.turn])).toEqual([1, 2, 3]);
    for (const turn of turns) {
      const [start] = childNamed(turn, 'StartActivity:callModel');
      expect(childNamed(start!, 'RunActivity:callModel')).toHaveLength(1);
    }
  });

  test("each model call is a chat client span under its attempt's span, with the GenAI attributes", () => {
    for (const turn of childNamed(agentSpan(), RUN_SPANS.modelTurn)) {
      const [attempt] = attemptSpans(turn, 'callModel');
      const [chat] = childNamed(attempt!, 'chat');
      expect(chat?.kind).toBe(SpanKind.CLIENT);
      expect(chat?.attributes).toMatchObject({ [GEN_AI.operationName]: 'chat', [GEN_AI.providerName]: 'scripted' });
    }
  });

  test('every tool call span carries the GenAI execute_tool attributes', () => {
    for (const tool of ['book_hotel', 'lookup_rate', 'charge_card']) {
      const call = one(`${RUN_SPANS.toolCall} ${tool}`);
      expect(call.attributes).toMatchObject({
        [GEN_AI.operationName]: 'execute_tool',
        [GEN_AI.toolName]: tool,
        [GEN_AI.toolCallId]: expect.any(String),
        [GEN_AI.toolType]: 'function',
      });
    }
  });

  test('a retried tool call is one span with one attempt span per attempt, each with its outcome', () => {
    const call = one(`${RUN_SPANS.toolCall} book_hotel`);
    expect(call.parentSpanId).toBe(agentSpan().spanContext().spanId);
    expect(call.status.code).toBe(SpanStatusCode.UNSET);
    expect(call.attributes).toMatchObject({
      [RUN_SPANS.attributes.stepId]: 1,
      [RUN_SPANS.attributes.idempotencyKey]: `${result.runKey}/1`,
      [RUN_SPANS.attributes.stepStatus]: 'succeeded',
      [RUN_SPANS.attributes.attempts]: 2,
    });
    const [start] = childNamed(call, 'StartActivity:book_hotel');
    const attempts = childNamed(start!, 'RunActivity:book_hotel').map((span) => span.attributes);
    attempts.sort((a, b) => Number(a[TOOL.attempt]) - Number(b[TOOL.attempt]));
    expect(attempts).toEqual([
      expect.objectContaining({
        [TOOL.tool]: 'book_hotel',
        [TOOL.idempotencyKey]: `${result.runKey}/1`,
        [TOOL.attempt]: 1,
        [TOOL.outcome]: 'retrying',
        [TOOL.classification]: 'transient',
        [TOOL.errorCode]: 'UNAVAILABLE',
        [TOOL.retryDelayMs]: expect.any(Number),
      }),
      expect.objectContaining({ [TOOL.attempt]: 2, [TOOL.outcome]: 'succeeded' }),
    ]);
  });

  test('a permanently failed tool call says so on its attempt span, with its code as error.type', () => {
    expect(
      attemptSpans(one(`${RUN_SPANS.toolCall} charge_card`), 'charge_card').map((span) => span.attributes),
    ).toEqual([
      expect.objectContaining({
        [TOOL.outcome]: 'failed',
        [TOOL.classification]: 'permanent',
        [TOOL.errorCode]: 'PERMISSION_DENIED',
        [GEN_AI.errorType]: 'PERMISSION_DENIED',
      }),
    ]);
  });

  test("a failed tool call's span has status ERROR and its code as error.type", () => {
    const call = one(`${RUN_SPANS.toolCall} charge_card`);
    expect(call.status.code).toBe(SpanStatusCode.ERROR);
    expect(call.attributes[GEN_AI.errorType]).toBe('PERMISSION_DENIED');
  });

  test('a call refused for its arguments counts the one attempt that refused it, on both spans', () => {
    const call = one(`${RUN_SPANS.toolCall} lookup_rate`);
    expect(call.attributes).toMatchObject({
      [GEN_AI.errorType]: 'INVALID_ARGUMENTS',
      [RUN_SPANS.attributes.attempts]: 1,
    });
    expect(attemptSpans(call, 'lookup_rate').map((span) => span.attributes[TOOL.attempt])).toEqual([1]);
  });

  test('the workflow spans carry only the WorkflowInfo fields an operator uses, no memo or search attributes', () => {
    const run = one('RunWorkflow:agentRun');
    expect(run.attributes).toMatchObject({ workflowType: 'agentRun', taskQueue: expect.any(String), attempt: 1 });
    for (const span of [run, agentSpan(), one(`${RUN_SPANS.toolCall} book_hotel`)]) {
      const infoFields = Object.keys(span.attributes).filter((key) => !key.includes('.'));
      expect(infoFields.every((key) => (WORKFLOW_SPAN_INFO_FIELDS as readonly string[]).includes(key))).toBe(true);
      expect(span.attributes).not.toHaveProperty('memo');
      expect(span.attributes).not.toHaveProperty('searchAttributes');
    }
  });

  test('the compensation span is linked to the span of the step it undoes', () => {
    const compensation = one(`${RUN_SPANS.compensation} cancel_hotel`);
    const booked = one(`${RUN_SPANS.toolCall} book_hotel`);
    expect(compensation.parentSpanId).toBe(agentSpan().spanContext().spanId);
    expect(compensation.links.map((link) => link.context.spanId)).toEqual([booked.spanContext().spanId]);
    expect(compensation.attributes).toMatchObject({
      [RUN_SPANS.attributes.compensationOf]: 'book_hotel',
      [RUN_SPANS.attributes.stepId]: 1,
    });
    const [start] = childNamed(compensation, 'StartActivity:cancel_hotel');
    expect(childNamed(start!, 'RunActivity:cancel_hotel').map((span) => span.attributes)).toEqual([
      expect.objectContaining({
        [TOOL.compensationOf]: 'book_hotel',
        [TOOL.idempotencyKey]: `${result.runKey}/1/undo`,
        [TOOL.outcome]: 'succeeded',
      }),
    ]);
  });

  test("no span holds an argument value of the run's calls", () => {
    const spans = tracing.spans().map(({ name, attributes, events, status, links }) => ({
      name,
      attributes,
      events,
      status,
      links,
    }));
    const text = JSON.stringify(spans);
    for (const value of ['Adlon', '99999', 'three']) expect(text).not.toContain(value);
  });

  test('gen_ai.client.operation.duration records each of the three model calls, in seconds', async () => {
    const points = await metrics.points(GEN_AI_METRICS.operationDuration);
    expect(points.map((p) => p.attributes)).toEqual([
      expect.objectContaining({ [GEN_AI.operationName]: 'chat', [GEN_AI.providerName]: 'scripted' }),
    ]);
    expect(points[0]).toMatchObject({ count: 3, unit: 's' });
  });

  test("the run's metrics count its calls by outcome, its retry and its compensation", async () => {
    expect(await metrics.total(ENGINE_METRICS.toolCalls, { tool: 'book_hotel', outcome: 'retrying' })).toBe(1);
    expect(await metrics.total(ENGINE_METRICS.toolCalls, { tool: 'book_hotel', outcome: 'succeeded' })).toBe(1);
    expect(await metrics.total(ENGINE_METRICS.toolCalls, { tool: 'charge_card', outcome: 'failed' })).toBe(1);
    expect(await metrics.total(ENGINE_METRICS.retries, { tool: 'book_hotel', classification: 'transient' })).toBe(1);
    expect(
      await metrics.total(ENGINE_METRICS.compensations, {
        tool: 'cancel_hotel',
        compensation_of: 'book_hotel',
        outcome: 'succeeded',
      }),
    ).toBe(1);
  });
});
