import { Context } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { z } from 'zod';
import {
  createFusedStepActivities,
  type FirstFusedStepResult,
  type FusedStepInput,
  type FusedStepResult,
} from '../../src/activities/fused-step';
import { createRecordedModelActivities } from '../../src/activities/recorded-model-turn';
import { createToolActivities } from '../../src/activities/tool-activities';
import type { ModelTurn } from '../../src/contract/model-types';
import { TransientToolError } from '../../src/failures/tool-errors';
import { MemoryIdempotencyStore } from '../../src/stores/idempotency/memory-idempotency-store';
import { defineTool, type Tool } from '../../src/tools/define-tool';
import { createToolRegistry } from '../../src/tools/tool-registry';
import type { CatalogClearanceRules, FusedChain, FusedClearance } from '../../src/contract/fused-step';
import { planChainedTurn } from '../../src/workflows/fused-chain-plan';
import { FAST_PATH_LIMITS } from '../../src/contract/fast-path';
import { transcriptChecksum } from '../../src/contract/transcript-checksum';
import { clearCatalog } from '../../src/workflows/fused-clearance';
import { planFusedCalls } from '../../src/workflows/fused-step-plan';
import { initialRunUsage } from '../../src/workflows/run-usage';
import { waitFor } from '../support/wait-for';

/**
 * The fused step's activity (src/activities/fused-step.ts): the recorded turn, then the planned calls through
 * the tools' own activity functions, stopping at the first that does not succeed.
 */

interface Seen {
  tool: string;
  key: string;
  activityType: string;
  attempt: number;
  maximumAttempts: number | undefined;
}

interface FixtureOptions {
  failFirst?: boolean;
  hang?: boolean;
  /** Characters of padding in every tool output (a large observation). */
  padChars?: number;
  /** Offer a chain (chained turns) with these bounds; the clock is the fixture's own. */
  chain?: Partial<FusedChain>;
}

function fixture(options: FixtureOptions = {}) {
  const seen: Seen[] = [];
  const effects: string[] = [];
  let failed = false;
  const tool = (name: string, effect: 'read-only' | 'irreversible', body?: () => Promise<void>): Tool =>
    defineTool({
      name,
      description: `The ${name} tool.`,
      input: z.object({ n: z.number() }),
      output: z.object({ ok: z.boolean(), pad: z.string().optional() }),
      effect,
      approval: 'never',
      idempotent: false,
      retry: { maximumAttempts: 3 },
      timeout: options.hang ? '1 second' : '30 seconds',
    }).implement(async (_input, ctx) => {
      const { info } = Context.current();
      seen.push({
        tool: name,
        key: ctx.idempotencyKey,
        activityType: info.activityType,
        attempt: info.attempt,
        maximumAttempts: info.retryPolicy?.maximumAttempts,
      });
      await body?.();
      effects.push(ctx.idempotencyKey);
      return options.padChars ? { ok: true, pad: 'x'.repeat(options.padChars) } : { ok: true };
    });
  const tools = [
    tool('pay', 'irreversible'),
    tool('flaky', 'irreversible', async () => {
      if (options.failFirst && !failed) {
        failed = true;
        throw new TransientToolError('busy', { mayHaveHadEffect: false });
      }
    }),
    tool('stuck', 'read-only', async () => {
      if (options.hang)
        await new Promise((resolve) => Context.current().cancellationSignal.addEventListener('abort', resolve));
      if (options.hang) throw new Error('aborted');
    }),
  ];
  const store = new MemoryIdempotencyStore();
  const toolActivities = createToolActivities({ registry: createToolRegistry(tools), idempotencyStore: store });
  let asked = 0;
  let answer: ModelTurn | Error | ((turn: number) => ModelTurn | Error) = { toolCalls: [], done: true };
  /** The requests the model was asked with: turn, where its messages start, and how many. */
  const requests: Array<{ turn: number; fromIndex: number; messages: number }> = [];
  /** The tool view each request asked for. */
  const views: string[] = [];
  const recorded = createRecordedModelActivities({
    callModel: async (request) => {
      asked += 1;
      requests.push({ turn: request.turn, fromIndex: request.fromIndex, messages: request.messages.length });
      views.push(request.toolView ?? 'full');
      const turn = typeof answer === 'function' ? answer(request.turn + 1) : answer;
      if (turn instanceof Error) throw turn;
      return turn;
    },
    store,
  });
  let clock = 0;
  const { callModelAndTools, describeToolsAndCallModel } = createFusedStepActivities({
    callModelOnce: recorded.callModelOnce,
    tools: toolActivities,
    plan: planFusedCalls,
    chain: planChainedTurn,
    now: () => clock,
    describeTools: () => toolActivities.describeTools(),
    clear: clearCatalog,
  });
  const clearance: FusedClearance = {
    verdict: {
      input: {},
      limits: { maxSteps: 50, maxTurns: 25 },
      usage: initialRunUsage(),
      turnNumber: 1,
      stepCount: 0,
      turnIssues: 0,
    },
    tools: tools.map((t) => ({
      entry: t.contract.catalogEntry,
      irreversible: t.contract.catalogEntry.effect !== 'read-only',
    })),
    firstStepId: 1,
    keys: ['wf/run/1', 'wf/run/2', 'wf/run/3'],
    runKey: 'wf/run',
    irreversibleDone: false,
    ...(options.chain
      ? {
          chain: {
            turnKeyPrefix: 'wf/run1/turn/',
            keyPrefix: 'wf/run',
            maxTurns: 16,
            budgetMs: 1_000,
            localCalls: 1,
            maxLocalCallsPerTask: 40,
            generation: { suggested: false, stepsThisGeneration: 0, transcriptBytes: 0 },
            ...options.chain,
          },
        }
      : {}),
  };
  const input: FusedStepInput = {
    runKey: 'wf/run',
    goal: 'g',
    settings: { provider: 'scripted' },
    turn: 0,
    fromIndex: 0,
    messages: [],
    turnKey: 'wf/run1/turn/1',
    clearance,
  };
  const env = new MockActivityEnvironment({ attempt: 1, isLocal: true, activityType: 'callModelAndTools' });
  const run = (): Promise<FusedStepResult> => env.run(callModelAndTools, input);
  /** The first step of a run: the same turn, its clearance made of the catalog under `rules`. */
  const runFirst = (rules: Partial<CatalogClearanceRules> = {}): Promise<FirstFusedStepResult> => {
    const { tools: _tools, ...base } = clearance;
    return env.run(describeToolsAndCallModel, {
      ...input,
      clearance: base,
      rules: { approval: {}, maxToolTimeoutMs: FAST_PATH_LIMITS.maxToolTimeoutMs, ...rules },
    });
  };
  return {
    seen,
    views,
    runFirst,
    catalog: tools.map((t) => t.contract.catalogEntry),
    effects,
    run,
    env,
    asked: () => asked,
    requests,
    answer: (turn: typeof answer) => {
      answer = turn;
    },
    /** Moves the fixture's clock on. */
    advance: (ms: number) => {
      clock += ms;
    },
  };
}

const callsTo = (...names: string[]): ModelTurn => ({
  toolCalls: names.map((name, i) => ({ id: `c${i}`, name, arguments: { n: i } })),
  done: false,
});

describe('the fused step activity', () => {
  test('runs the planned calls in order, each as its own tool activity: its type, attempt 1, its retry policy', async () => {
    const t = fixture();
    t.answer(callsTo('pay', 'pay'));
    const { turn, executed } = await t.run();
    expect(turn.toolCalls).toHaveLength(2);
    expect(executed.map((call) => [call.stepId, call.tool, call.idempotencyKey])).toEqual([
      [1, 'pay', 'wf/run/1'],
      [2, 'pay', 'wf/run/2'],
    ]);
    expect(t.seen).toEqual([
      { tool: 'pay', key: 'wf/run/1', activityType: 'pay', attempt: 1, maximumAttempts: 3 },
      { tool: 'pay', key: 'wf/run/2', activityType: 'pay', attempt: 1, maximumAttempts: 3 },
    ]);
  });

  test('run again (a retried workflow task) takes the turn from its record and each call from the key store', async () => {
    const t = fixture();
    t.answer(callsTo('pay', 'pay'));
    await t.run();
    const again = await t.run();
    expect(t.asked()).toBe(1);
    expect(t.effects).toEqual(['wf/run/1', 'wf/run/2']);
    expect(again.executed.map((call) => call.result.replayed)).toEqual([true, true]);
  });

  test('stops at a call that fails, without failing: the workflow runs that call and the rest itself', async () => {
    const t = fixture({ failFirst: true });
    t.answer(callsTo('pay', 'flaky', 'pay'));
    const { executed } = await t.run();
    expect(executed.map((call) => call.tool)).toEqual(['pay']);
    expect(t.effects).toEqual(['wf/run/1']);
  });

  test('stops at a call of a tool the worker does not have', async () => {
    const t = fixture();
    t.answer(callsTo('pay', 'missing', 'pay'));
    expect((await t.run()).executed).toHaveLength(1);
  });

  test('stops at a call that outlives its attempt timeout', async () => {
    const t = fixture({ hang: true });
    t.answer(callsTo('stuck', 'pay'));
    expect((await t.run()).executed).toEqual([]);
    expect(t.effects).toEqual([]);
  });

  test('starts no call once it is cancelled', async () => {
    const t = fixture({ hang: true });
    t.answer(callsTo('stuck', 'pay', 'pay'));
    const running = t.run();
    await waitFor('the first call to start', async () => (t.seen.length > 0 ? true : undefined));
    t.env.cancel();
    expect((await running).executed).toEqual([]);
    expect(t.seen.map((call) => call.tool)).toEqual(['stuck']);
  });

  test('fails as the turn fails, and runs no call', async () => {
    const t = fixture();
    t.answer(new Error('provider down'));
    await expect(t.run()).rejects.toThrow('provider down');
    expect(t.seen).toEqual([]);
  });

  test('runs no call when the turn answers', async () => {
    const t = fixture();
    t.answer({ text: 'done', toolCalls: [], done: true });
    expect(await t.run()).toMatchObject({ turn: { done: true }, executed: [] });
  });
});

/** A script of single-call turns of `tool`, `turns` of them, then an answer. */
const payTurns =
  (turns: number, tool = 'pay') =>
  (turn: number): ModelTurn =>
    turn <= turns ? callsTo(tool) : { text: 'Paid.', toolCalls: [], done: true };

describe('the fused step activity with chained turns', () => {
  test('asks each next turn with the messages after the last and runs its calls, until the model answers', async () => {
    const t = fixture({ chain: {} });
    t.answer(payTurns(3));
    const { executed, chained } = await t.run();
    expect(executed.map((call) => call.stepId)).toEqual([1]);
    expect(chained?.map((link) => [link.turnNumber, link.executed.map((call) => call.idempotencyKey)])).toEqual([
      [2, ['wf/run/2']],
      [3, ['wf/run/3']],
      [4, []],
    ]);
    expect(chained?.[2]?.turn).toMatchObject({ done: true, text: 'Paid.' });
    // Each turn sends the assistant message and the observation of the turn before it.
    expect(t.requests).toEqual([
      { turn: 0, fromIndex: 0, messages: 0 },
      { turn: 1, fromIndex: 0, messages: 2 },
      { turn: 2, fromIndex: 2, messages: 2 },
      { turn: 3, fromIndex: 4, messages: 2 },
    ]);
    expect(t.effects).toEqual(['wf/run/1', 'wf/run/2', 'wf/run/3']);
  });

  test('returns the checksum of each chained turn’s delta, for the workflow to compare with its own', async () => {
    const t = fixture({ chain: {} });
    t.answer(payTurns(1));
    const { chained } = await t.run();
    expect(chained).toHaveLength(1);
    expect(chained?.[0]?.checksum).toMatch(/^[0-9a-f]{16}$/);
    expect(chained?.[0]?.checksum).not.toBe(transcriptChecksum(0, []));
  });

  test('records each chained turn under its own key: run again, it asks nothing and makes no effect', async () => {
    const t = fixture({ chain: {} });
    t.answer(payTurns(3));
    const first = await t.run();
    const again = await t.run();
    expect(t.asked()).toBe(4);
    expect(t.effects).toHaveLength(3);
    expect(again.chained?.map((link) => link.turn)).toEqual(first.chained?.map((link) => link.turn));
    expect(again.chained?.[0]?.executed[0]?.result.replayed).toBe(true);
  });

  test('asks at most the chain’s number of further turns', async () => {
    const t = fixture({ chain: { maxTurns: 2 } });
    t.answer(payTurns(10));
    expect((await t.run()).chained).toHaveLength(2);
    expect(t.asked()).toBe(3);
  });

  test('asks no further turn once its time budget has passed', async () => {
    const t = fixture({ chain: { budgetMs: 1_000 } });
    t.answer((turn) => {
      if (turn === 2) t.advance(1_000);
      return payTurns(10)(turn);
    });
    expect((await t.run()).chained?.map((link) => link.turnNumber)).toEqual([2]);
    expect(t.asked()).toBe(2);
  });

  test('ends the chain, not the step, when a chained turn fails: the workflow asks that turn itself', async () => {
    const t = fixture({ chain: {} });
    t.answer((turn) => (turn === 3 ? new Error('provider down') : payTurns(10)(turn)));
    const { executed, chained } = await t.run();
    expect(executed).toHaveLength(1);
    expect(chained?.map((link) => link.turnNumber)).toEqual([2]);
  });

  test('ends the chain after a turn whose calls did not all run', async () => {
    const t = fixture({ chain: {}, failFirst: true });
    t.answer((turn) => (turn === 2 ? callsTo('flaky') : payTurns(10)(turn)));
    const { chained } = await t.run();
    expect(chained?.map((link) => [link.turnNumber, link.executed.length])).toEqual([[2, 0]]);
    expect(t.asked()).toBe(2);
  });

  test('leaves out a chained turn that would take its result past maxChainResultBytes', async () => {
    // Each call returns ~12 KB (within the inline output budget): 16 chained turns would be ~200 KB.
    const t = fixture({ chain: {}, padChars: 12_000 });
    t.answer(payTurns(16));
    const result = await t.run();
    // The result stays within the bound; the workflow asks the turns left out itself.
    expect(result.chained?.length).toBeGreaterThan(0);
    expect(result.chained!.length).toBeLessThan(16);
    expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThanOrEqual(FAST_PATH_LIMITS.maxChainResultBytes);
  });

  test('chains nothing when the clearance offers no chain', async () => {
    const t = fixture();
    t.answer(payTurns(3));
    expect((await t.run()).chained).toBeUndefined();
    expect(t.asked()).toBe(1);
  });
});

describe('the first fused step of a run, which reads the catalog itself', () => {
  test("returns the worker's catalog and runs the first turn's calls of the tools it cleared", async () => {
    const t = fixture();
    t.answer(callsTo('pay', 'pay'));
    const first = await t.runFirst();
    expect(first.catalog).toEqual(t.catalog);
    expect(first.cleared).toEqual(['pay', 'flaky', 'stuck']);
    expect(first.disclosedOnDemand).toBe(false);
    expect(first.step!.executed.map((call) => [call.stepId, call.tool, call.idempotencyKey])).toEqual([
      [1, 'pay', 'wf/run/1'],
      [2, 'pay', 'wf/run/2'],
    ]);
    expect(t.views).toEqual(['full']);
  });

  test("runs no call of a tool the run's policy makes ask: a plain turn when no tool is cleared", async () => {
    const t = fixture();
    t.answer(callsTo('pay'));
    const first = await t.runFirst({ approval: { requireForEffects: true } });
    expect(first.cleared).toEqual(['stuck']);
    expect(first.step!.executed).toEqual([]);
    const none = fixture();
    none.answer(callsTo('pay'));
    const plain = await none.runFirst({ allowedTools: ['pay'], approval: { tools: { pay: 'always' } } });
    expect(plain).toMatchObject({ cleared: [], step: { executed: [] } });
    expect(plain.step!.turn.toolCalls).toHaveLength(1);
    expect(none.effects).toEqual([]);
  });

  test("asks the turn with the summary view when the catalog is over the run's disclosure budget", async () => {
    const t = fixture();
    t.answer(callsTo('pay'));
    const first = await t.runFirst({ toolDisclosure: { maxTools: 1 } });
    expect(first.disclosedOnDemand).toBe(true);
    expect(t.views).toEqual(['summary']);
    expect(first.step!.executed.map((call) => call.tool)).toEqual(['pay']);
  });

  test('run again (a retried workflow task) takes the turn from its record and each call from the key store', async () => {
    const t = fixture();
    t.answer(callsTo('pay'));
    await t.runFirst();
    const again = await t.runFirst();
    expect(t.asked()).toBe(1);
    expect(t.effects).toEqual(['wf/run/1']);
    expect(again.step!.executed.map((call) => call.result.replayed)).toEqual([true]);
  });

  test('returns the catalog alone when the whole would be too large; run again, the turn and calls answer from their records', async () => {
    const t = fixture();
    const text = 'x'.repeat(FAST_PATH_LIMITS.maxFirstStepResultBytes);
    t.answer({ ...callsTo('pay', 'pay'), text });
    const first = await t.runFirst();
    expect(first.step).toBeUndefined();
    expect(first.catalog).toEqual(t.catalog);
    expect(t.effects).toEqual(['wf/run/1', 'wf/run/2']);
    // The workflow asks the turn itself (callModelAndTools): nothing is asked or paid again.
    const again = await t.run();
    expect(again.turn.text).toBe(text);
    expect(t.asked()).toBe(1);
    expect(t.effects).toEqual(['wf/run/1', 'wf/run/2']);
    expect(again.executed.map((call) => call.result.replayed)).toEqual([true, true]);
  });

  test('fails as the turn fails, and runs no call', async () => {
    const t = fixture();
    t.answer(new Error('provider down'));
    await expect(t.runFirst()).rejects.toThrow('provider down');
    expect(t.seen).toEqual([]);
  });
});
