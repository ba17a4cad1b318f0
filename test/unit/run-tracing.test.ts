import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { ContinueAsNew } from '@temporalio/workflow';
import type {
  AgentRunInput,
  AgentRunResult,
  PendingCompensation,
  StepRecord,
} from '../../src/contract/agent-run-types';
import { GEN_AI_ATTRIBUTES as GEN_AI } from '../../src/contract/gen-ai-conventions';
import { RUN_SPANS, traceAgentInvocation, traceCompensation, traceToolStep } from '../../src/workflows/run-tracing';

function step(overrides: Partial<StepRecord> = {}): StepRecord {
  return {
    stepId: 1,
    turn: 1,
    toolCallId: 'call_1',
    tool: 'pay',
    arguments: {},
    idempotencyKey: 'wf/run/1',
    status: 'succeeded',
    attempts: 1,
    ...overrides,
  };
}

const declined: Partial<StepRecord> = {
  status: 'failed',
  observation: {
    status: 'error',
    code: 'PERMISSION_DENIED',
    message: 'declined',
    hint: 'no',
    retryable: false,
    attempts: 1,
  },
};

function owed(): PendingCompensation {
  return { stepId: 1, tool: 'pay', undo: 'refund', arguments: {}, idempotencyKey: 'wf/run/1' };
}

const input: AgentRunInput = { goal: 'Pay', model: { provider: 'openai', model: 'gpt-4o' }, agentName: 'cashier' };

function result(overrides: Partial<AgentRunResult> = {}): AgentRunResult {
  const usage = { inputTokens: 120, outputTokens: 30, unreportedTurns: 0, unpricedTurns: 0, turns: [] };
  return { status: 'completed', steps: [], usage, ...overrides } as unknown as AgentRunResult;
}

function traced() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider();
  provider.addSpanProcessor(new SimpleSpanProcessor(exporter));
  trace.setGlobalTracerProvider(provider);
  const only = () => {
    const spans = exporter.getFinishedSpans();
    if (spans.length !== 1) throw new Error(`expected one span, found ${spans.length}`);
    return spans[0]!;
  };
  return { only };
}

// What an SDK installs in a process (and Temporal's interceptors in the sandbox): the active span follows awaits.
beforeAll(() => context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()));
afterAll(() => context.disable());
afterEach(() => trace.disable());

describe('execute_tool spans', () => {
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
    const { only } = traced();
    const compensation = owed();
    await traceToolStep('pay', [compensation], async () => step());
    expect(only().name).toBe('execute_tool pay');
    expect(only().attributes['durable_tools.idempotency_key']).toBe('wf/run/1');
    expect(compensation.span?.spanId).toBe(only().spanContext().spanId);
  });

  test('a tool step span carries the GenAI execute_tool attributes', async () => {
    const { only } = traced();
    await traceToolStep('pay', [], async () => step());
    expect(only().kind).toBe(SpanKind.INTERNAL);
    expect(only().attributes).toMatchObject({
      [GEN_AI.operationName]: 'execute_tool',
      [GEN_AI.toolName]: 'pay',
      [GEN_AI.toolCallId]: 'call_1',
      [GEN_AI.toolType]: 'function',
    });
  });

  test('a succeeded tool step has no error.type and status UNSET', async () => {
    const { only } = traced();
    await traceToolStep('pay', [], async () => step());
    expect(only().attributes[GEN_AI.errorType]).toBeUndefined();
    expect(only().status.code).toBe(SpanStatusCode.UNSET);
  });

  test("a failed tool step has status ERROR and its observation's code as error.type", async () => {
    const { only } = traced();
    await traceToolStep('pay', [], async () => step(declined));
    expect(only().status).toMatchObject({ code: SpanStatusCode.ERROR, message: 'PERMISSION_DENIED' });
    expect(only().attributes[GEN_AI.errorType]).toBe('PERMISSION_DENIED');
    expect(only().attributes['durable_tools.error_code']).toBe('PERMISSION_DENIED');
  });
});

describe('invoke_agent spans', () => {
  test('an agent invocation is an invoke_agent span named after the agent, with its GenAI attributes', async () => {
    const { only } = traced();
    await traceAgentInvocation({ input }, async () => result());
    expect(only().name).toBe('invoke_agent cashier');
    expect(only().kind).toBe(SpanKind.INTERNAL);
    expect(only().attributes).toMatchObject({
      [GEN_AI.operationName]: 'invoke_agent',
      [GEN_AI.agentName]: 'cashier',
      [GEN_AI.providerName]: 'openai',
      [GEN_AI.requestModel]: 'gpt-4o',
    });
  });

  test('a run without an agent name is a span named invoke_agent, without gen_ai.agent.name', async () => {
    const { only } = traced();
    const { agentName: _name, ...unnamed } = input;
    await traceAgentInvocation({ input: unnamed }, async () => result());
    expect(only().name).toBe(RUN_SPANS.agent);
    expect(only().attributes[GEN_AI.agentName]).toBeUndefined();
  });

  test("a sub-agent's invocation is named after its agent tool", async () => {
    const { only } = traced();
    const { agentName: _name, ...unnamed } = input;
    const subAgent = { parentWorkflowId: 'parent', parentStepId: 2, tool: 'researcher', callKey: 'parent/r/2' };
    await traceAgentInvocation({ input: { ...unnamed, subAgent } }, async () => result());
    expect(only().name).toBe('invoke_agent researcher');
  });

  test("a conversation's message carries the conversation's id as gen_ai.conversation.id", async () => {
    const { only } = traced();
    await traceAgentInvocation({ input, conversationId: 'conversation-7' }, async () => result());
    expect(only().attributes[GEN_AI.conversationId]).toBe('conversation-7');
  });

  test('the invocation reports the tokens it used, not those carried over from earlier generations', async () => {
    const { only } = traced();
    const carriedOver = { usage: { inputTokens: 100, outputTokens: 10, unreportedTurns: 0, unpricedTurns: 0 } };
    const carried = { ...input, carriedOver } as unknown as AgentRunInput;
    await traceAgentInvocation({ input: carried }, async () => result());
    expect(only().attributes).toMatchObject({ [GEN_AI.usageInputTokens]: 20, [GEN_AI.usageOutputTokens]: 20 });
  });

  test('a run that ends compensated has status ERROR and its status as error.type', async () => {
    const { only } = traced();
    await traceAgentInvocation({ input }, async () => result({ status: 'compensated' }));
    expect(only().status.code).toBe(SpanStatusCode.ERROR);
    expect(only().attributes[GEN_AI.errorType]).toBe('compensated');
  });

  test("the workflow's span gets the run's status too", async () => {
    traced();
    const workflow = trace.getTracer('test').startSpan('RunWorkflow:agentRun');
    await context.with(trace.setSpan(context.active(), workflow), () =>
      traceAgentInvocation({ input }, async () => result({ status: 'compensated' })),
    );
    workflow.end();
    expect((workflow as unknown as ReadableSpan).attributes[RUN_SPANS.attributes.runStatus]).toBe('compensated');
  });

  test('a generation that continues as new is no error', async () => {
    const { only } = traced();
    const continued = new ContinueAsNew({ workflowType: 'agentRun' });
    await expect(traceAgentInvocation({ input }, () => Promise.reject(continued))).rejects.toBe(continued);
    expect(only().status.code).toBe(SpanStatusCode.UNSET);
    expect(only().attributes[GEN_AI.errorType]).toBeUndefined();
  });
});

describe('compensate spans', () => {
  test("a failed compensation has status ERROR and its activity failure's type as error.type", async () => {
    const { only } = traced();
    const cause = ApplicationFailure.nonRetryable('gone', 'NOT_FOUND');
    const failure = new ActivityFailure('failed', 'refund', '1', RetryState.NON_RETRYABLE_FAILURE, 'worker', cause);
    await expect(traceCompensation(owed(), () => Promise.reject(failure))).rejects.toBe(failure);
    expect(only().status.code).toBe(SpanStatusCode.ERROR);
    expect(only().attributes[GEN_AI.errorType]).toBe('NOT_FOUND');
  });
});
