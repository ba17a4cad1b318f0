import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import type { AgentRunResult } from '../../src/contract/agent-run-types';
import { GEN_AI_ATTRIBUTES as GEN_AI } from '../../src/contract/gen-ai-conventions';
import { inMemoryTracing } from '../support/in-memory-telemetry';
import { lookupRateTool as lookupRate } from '../support/test-tools';
import { uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { createTracedClient, createTracedWorker } from '../support/traced-worker';

/**
 * Issue 50 on the default path (the fast path, docs/fast-path.md): turns and the calls fused with them run in
 * local activities, and the run's trace still has its `invoke_agent`, a `chat` span per model call and an
 * `execute_tool` span per tool call, in one trace.
 */

const temporal = useTestTemporal();
const tracing = inMemoryTracing();
let result: AgentRunResult;

beforeAll(async () => {
  const taskQueue = uniqueTaskQueue('fast-path-tracing');
  const worker = await createTracedWorker(temporal, tracing, { tools: [lookupRate], taskQueue });
  const client = await createTracedClient(temporal, tracing);
  result = await worker.runUntil(async () => {
    const script = [
      { toolCalls: [{ name: 'lookup_rate', arguments: { city: 'Berlin' } }] },
      { toolCalls: [{ name: 'lookup_rate', arguments: { city: 'Paris' } }] },
      { text: 'Berlin 120, Paris 120.', final: true },
    ];
    const input = { goal: 'Compare rates', model: { provider: 'scripted', script }, agentName: 'rates' };
    return waitForAgentRun(await startAgentRun(client, input, { taskQueue }));
  });
});

const named = (name: string): ReadableSpan[] => tracing.spans().filter((span) => span.name === name);

/** Whether `span` is below `ancestor` in the trace. */
function isBelow(span: ReadableSpan, ancestor: ReadableSpan): boolean {
  const byId = new Map(tracing.spans().map((s) => [s.spanContext().spanId, s]));
  for (let parent = byId.get(span.parentSpanId ?? ''); parent; parent = byId.get(parent.parentSpanId ?? '')) {
    if (parent === ancestor) return true;
  }
  return false;
}

test('the run completes on the fast path', () => {
  expect(result.status).toBe('completed');
});

test('each of the three model calls is a chat span below the invoke_agent span', () => {
  const [agent] = named('invoke_agent rates');
  const chats = named('chat');
  expect(chats).toHaveLength(3);
  for (const chat of chats) {
    expect(chat.attributes[GEN_AI.operationName]).toBe('chat');
    expect(isBelow(chat, agent!)).toBe(true);
  }
});

test('each of the two tool calls is an execute_tool span below the invoke_agent span', () => {
  const [agent] = named('invoke_agent rates');
  const calls = named('execute_tool lookup_rate');
  expect(calls.map((span) => span.attributes[GEN_AI.toolName])).toEqual(['lookup_rate', 'lookup_rate']);
  for (const call of calls) expect(isBelow(call, agent!)).toBe(true);
});
