import { boundErrorObservation } from '../../src/contract/bound-observation';
import { boundModelTurn } from '../../src/contract/bound-model-turn';
import {
  boundToolOutput,
  resolveCompensationArguments,
  storeCallArguments,
} from '../../src/stores/transcripts/claim-check';
import { isStoredOutputReference, type StoredOutputReference } from '../../src/contract/claim-check-reference';
import { approxTokens, PAYLOAD_LIMITS, safeSlice, utf8Length } from '../../src/contract/payload-limits';
import { createReadStoredOutputTool } from '../../src/tools/read-stored-output-tool';
import type { ToolCatalogEntry } from '../../src/contract/tool-catalog-entry';
import { DEFAULT_TOOL_BUDGET, resolveToolBudget } from '../../src/contract/tool-budget';
import type { ToolContext } from '../../src/tools/tool-context';
import { MemoryTranscriptStore } from '../../src/stores/transcripts/memory-transcript-store';
import type { AgentRunState, StepRecord } from '../../src/contract/agent-run-types';
import { argumentsTooLarge, boundedRunView, compensationArguments } from '../../src/workflows/run-budget';

const context = (overrides: Partial<Parameters<typeof boundToolOutput>[2]> = {}) => ({
  budget: DEFAULT_TOOL_BUDGET,
  idempotencyKey: 'run-1/3',
  runId: 'run-1',
  compensable: false,
  ...overrides,
});

describe('measuring payloads', () => {
  test('utf8Length counts bytes like Buffer.byteLength, lone surrogates included', () => {
    for (const text of ['abc', 'Zürich', '東京', '🧳✈️', 'a\ud800b', '\udc00']) {
      expect(utf8Length(text)).toBe(Buffer.byteLength(text, 'utf8'));
    }
  });

  test('approxTokens counts ~4 ASCII characters per token and one per other character', () => {
    expect(approxTokens('x'.repeat(400))).toBe(100);
    expect(approxTokens('東'.repeat(100))).toBe(100);
  });

  test('safeSlice never cuts a surrogate pair in half', () => {
    expect(safeSlice('a🧳b', 0, 2)).toBe('a');
    expect(safeSlice('a🧳b', 2, 4)).toBe('b');
  });
});

describe('a tool output above its budget', () => {
  test('is stored and replaced by a preview and a handle', async () => {
    const store = new MemoryTranscriptStore();
    const output = { data: 'x'.repeat(150 * 1024) };

    const bounded = await boundToolOutput(output, store, context());

    expect(isStoredOutputReference(bounded)).toBe(true);
    const reference = bounded as StoredOutputReference;
    expect(reference).toMatchObject({ handle: 'out:run-1/3', bytes: JSON.stringify(output).length });
    expect(reference.preview).toHaveLength(PAYLOAD_LIMITS.previewChars);
    expect(reference.hint).toContain('read_stored_output');
    expect(JSON.stringify(reference).length).toBeLessThan(4 * 1024);
    expect(await store.getPayload('out:run-1/3')).toMatchObject({ runId: 'run-1', text: JSON.stringify(output) });
  });

  test('counts tokens too: a CJK output under the byte budget but over the token budget is stored', async () => {
    const store = new MemoryTranscriptStore();
    const output = '東'.repeat(5_000); // 15 KB, ~5,000 tokens

    expect(isStoredOutputReference(await boundToolOutput(output, store, context()))).toBe(true);
  });

  test('an output within budget passes unchanged and nothing is stored', async () => {
    const store = new MemoryTranscriptStore();

    expect(await boundToolOutput({ ok: true }, store, context())).toEqual({ ok: true });
    expect(await store.getPayload('out:run-1/3')).toBeUndefined();
  });

  test("a tool's own smaller budget is honoured", async () => {
    const store = new MemoryTranscriptStore();
    const budget = resolveToolBudget('tiny', { maxOutputBytes: 100, previewChars: 10 });

    const bounded = (await boundToolOutput(
      { text: 'y'.repeat(200) },
      store,
      context({ budget }),
    )) as StoredOutputReference;

    expect(bounded.preview).toBe('{"text":"y');
  });
});

describe('read_stored_output', () => {
  const tool = createReadStoredOutputTool(Object.assign(new MemoryTranscriptStore(), {}));
  const ctx = { runId: 'run-1' } as ToolContext;

  test('pages through a stored output of its own run to the end', async () => {
    const store = new MemoryTranscriptStore();
    const reader = createReadStoredOutputTool(store);
    const text = JSON.stringify({ data: 'abc'.repeat(5_000) });
    await store.putPayload('out:run-1/3', { runId: 'run-1', text });

    let offset: number | null = 0;
    let read = '';
    while (offset !== null) {
      const page = (await reader.execute({ handle: 'out:run-1/3', offset }, ctx)) as {
        text: string;
        nextOffset: number | null;
      };
      read += page.text;
      offset = page.nextOffset;
    }
    expect(read).toBe(text);
  });

  test("refuses another run's output as NOT_FOUND", async () => {
    const store = new MemoryTranscriptStore();
    const reader = createReadStoredOutputTool(store);
    await store.putPayload('out:run-2/1', { runId: 'run-2', text: '"secret"' });

    await expect(reader.execute({ handle: 'out:run-2/1' }, ctx)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(tool.execute({ handle: 'out:nothing' }, ctx)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  test('is within its own budget at the largest page', () => {
    const entry = tool.contract.catalogEntry;
    expect(entry.effect).toBe('read-only');
    expect(entry.budget?.maxOutputBytes).toBeGreaterThanOrEqual(8_000 * 6);
  });
});

describe('compensations of calls with large data', () => {
  test('carry large arguments by reference and get them back whole', async () => {
    const store = new MemoryTranscriptStore();
    const raw = JSON.stringify({ text: 'z'.repeat(100_000) });
    const carried = compensationArguments(raw, 'run-1/4');
    expect(carried.storeArguments).toBe(true);
    await storeCallArguments(raw, store, 'run-1/4', 'run-1');

    const resolved = await resolveCompensationArguments(
      { originalInput: carried.value, originalKey: 'run-1/4' },
      store,
      'run-1',
    );

    expect(resolved).toEqual({ originalInput: JSON.parse(raw), originalKey: 'run-1/4' });
  });

  test("never resolve a reference to another run's data", async () => {
    const store = new MemoryTranscriptStore();
    await store.putPayload('args:run-2/1', { runId: 'run-2', text: '{"secret":1}' });
    const forged = {
      originalInput: { $durableTools: 'stored-arguments', handle: 'args:run-2/1', bytes: 1 },
      originalKey: 'k',
    };

    await expect(resolveCompensationArguments(forged, store, 'run-1')).rejects.toMatchObject({
      code: 'CLAIM_CHECK_MISSING',
    });
  });
});

describe('arguments and model turns', () => {
  const entry = { name: 'echo', budget: resolveToolBudget('echo', {}) } as ToolCatalogEntry;

  test('arguments above the tool limit are refused as INVALID_ARGUMENTS "too large", measured on the raw text', () => {
    const refusal = argumentsTooLarge(JSON.stringify({ text: 'x'.repeat(300 * 1024) }), entry);
    expect(refusal).toMatchObject({ code: 'INVALID_ARGUMENTS', retryable: false, attempts: 0 });
    expect(refusal?.message).toMatch(/too large: 300\.0? ?KB|too large: 300 KB/);
    expect(argumentsTooLarge({ text: 'small' }, entry)).toBeUndefined();
  });

  test('a model turn never carries more than the turn budget: oversized arguments become a marker', () => {
    const huge = 'x'.repeat(1_700 * 1024);
    const turn = boundModelTurn({
      toolCalls: [
        { id: 'a', name: 'echo', arguments: huge },
        { id: 'b', name: 'echo', arguments: { text: 'x'.repeat(1_000 * 1024) } },
        { id: 'c', name: 'echo', arguments: { text: 'x'.repeat(1_000 * 1024) } },
      ],
      done: false,
    });
    expect(turn.toolCalls[0]?.arguments).toMatchObject({ $durableTools: 'oversized-arguments' });
    expect(turn.toolCalls[1]?.arguments).toEqual({ text: expect.any(String) });
    expect(turn.toolCalls[2]?.arguments).toMatchObject({ $durableTools: 'oversized-arguments' });
    expect(JSON.stringify(turn).length).toBeLessThan(PAYLOAD_LIMITS.modelTurnArgumentBytes + 10_000);
    expect(argumentsTooLarge(turn.toolCalls[0]?.arguments, entry)?.message).toMatch(/too large/);
  });

  test('a model turn keeps at most 32 calls and counts the rest', () => {
    const calls = Array.from({ length: 1_000 }, (_, i) => ({ id: `c${i}`, name: 'echo', arguments: {} }));
    const turn = boundModelTurn({ toolCalls: calls, done: false });
    expect(turn.toolCalls).toHaveLength(PAYLOAD_LIMITS.maxToolCallsPerTurn);
    expect(turn.droppedToolCalls).toBe(1_000 - PAYLOAD_LIMITS.maxToolCallsPerTurn);
  });

  test('an error observation with a 5 MB message and 50k issues stays small', () => {
    const bounded = boundErrorObservation({
      status: 'error',
      code: 'INTERNAL',
      message: 'm'.repeat(5 * 1024 * 1024),
      hint: 'h',
      retryable: false,
      attempts: 1,
      issues: Array.from({ length: 50_000 }, (_, i) => ({ path: `[${i}]`, message: 'invented' })),
    });
    expect(JSON.stringify(bounded).length).toBeLessThan(16 * 1024);
    expect(bounded.issues?.at(-1)?.message).toMatch(/49980 more problems/);
  });
});

describe('the run view (query answer and result)', () => {
  test('stays within budget however many large steps there are, compacting the oldest first', () => {
    const step = (stepId: number): StepRecord => ({
      stepId,
      turn: 1,
      toolCallId: `c${stepId}`,
      tool: 'big',
      arguments: { q: 'x'.repeat(1_000) },
      idempotencyKey: `run-1/${stepId}`,
      status: 'succeeded',
      observation: { status: 'ok', output: { data: 'y'.repeat(16 * 1024) } },
    });
    const state: AgentRunState = {
      workflowId: 'run-1',
      runId: 'run-1',
      goal: 'g',
      status: 'completed',
      turns: 1,
      stepCount: 2_000,
      generation: 0,
      steps: Array.from({ length: 2_000 }, (_, i) => step(i + 1)),
      policyWarnings: [],
      usage: { inputTokens: 0, outputTokens: 0, unreportedTurns: 0, unpricedTurns: 0, turns: [] },
    };

    const view = boundedRunView(state);

    expect(JSON.stringify(view).length).toBeLessThanOrEqual(PAYLOAD_LIMITS.runViewBytes);
    expect(view.steps.at(-1)?.observation === state.steps.at(-1)?.observation).toBe(true);
    expect(view.steps.at(-1)?.stepId).toBe(2_000);
    expect(view.omittedSteps).toBeGreaterThan(0);
    expect((view.steps[0]?.observation as { output: unknown }).output).toEqual({
      $durableTools: 'omitted',
      note: 'See the step in history.',
    });
    expect(typeof (state.steps[0]?.observation as { output: { data: unknown } }).output.data).toBe('string');
  });
});

describe('per-tool budgets in defineTool', () => {
  test('refuse values that are not positive integers or are above the ceiling, naming the field', () => {
    expect(() => resolveToolBudget('t', { maxOutputBytes: 0 })).toThrow(/budget.maxOutputBytes must be an integer/);
    expect(() => resolveToolBudget('t', { maxArgumentBytes: 3 * 1024 * 1024 })).toThrow(/budget.maxArgumentBytes/);
    expect(() => resolveToolBudget('t', { maxOutputTokens: Number.NaN })).toThrow(/maxOutputTokens/);
    expect(() => resolveToolBudget('t', { bogus: 1 } as never)).toThrow(/unknown budget field "bogus"/);
  });
});
