import { FAST_PATH_LIMITS } from '../../src/contract/fast-path';
import type { ToolCatalogEntry } from '../../src/contract/tool-catalog-entry';
import { modelTurnRunsLocally, toolRunsLocally, type FastPath } from '../../src/workflows/fast-path';
import { fastPathState, PAY_ENTRY } from '../support/fast-path-fixtures';

const pay = PAY_ENTRY;
const fastPath = (fields: Partial<FastPath> = {}): FastPath => fastPathState({ maxLocalCallsPerTask: 3, ...fields });

describe('which tool calls take the fast path', () => {
  test('a short call with effects runs locally on the fast path (the key store guards its effect)', () => {
    expect(toolRunsLocally(fastPath(), pay, false)).toBe(true);
  });

  test('no call runs locally in a run without the fast path, unless its tool is declared local', () => {
    expect(toolRunsLocally(fastPath({ on: false }), pay, false)).toBe(false);
    expect(toolRunsLocally(undefined, { ...pay, effect: 'read-only', execution: 'local' }, false)).toBe(true);
  });

  test('a tool allowed attempts longer than the fast path bound stays a regular activity', () => {
    expect(toolRunsLocally(fastPath(), { ...pay, timeoutMs: FAST_PATH_LIMITS.maxToolTimeoutMs + 1 }, false)).toBe(
      false,
    );
  });

  test("a tool that declares execution 'activity' stays a regular activity", () => {
    expect(toolRunsLocally(fastPath(), { ...pay, execution: 'activity' }, false)).toBe(false);
  });

  test('long calls, async jobs and approved calls stay regular activities', () => {
    const longCall = { ...pay, longCall: {} as NonNullable<ToolCatalogEntry['longCall']> };
    const asyncJob = { ...pay, asyncJob: {} as NonNullable<ToolCatalogEntry['asyncJob']> };

    expect(toolRunsLocally(fastPath(), longCall, false)).toBe(false);
    expect(toolRunsLocally(fastPath(), asyncJob, false)).toBe(false);
    expect(toolRunsLocally(fastPath(), pay, true)).toBe(false);
  });
});

describe('the local work of one workflow task', () => {
  test('after maxLocalCallsPerTask local calls the next model turn is a regular activity, and counting restarts', () => {
    const fast = fastPath({ maxLocalCallsPerTask: 3 });
    const decisions = [
      modelTurnRunsLocally(fast),
      toolRunsLocally(fast, pay, false),
      modelTurnRunsLocally(fast),
      toolRunsLocally(fast, pay, false),
      modelTurnRunsLocally(fast),
      modelTurnRunsLocally(fast),
    ];

    expect(decisions).toEqual([true, true, true, true, false, true]);
  });

  test('a regular call ends the task too: the count restarts after it', () => {
    const fast = fastPath({ maxLocalCallsPerTask: 2, localCalls: 1 });

    toolRunsLocally(fast, { ...pay, timeoutMs: 60_000 }, false);

    expect(fast.localCalls).toBe(0);
  });

  test('a run that keeps its model turns regular runs only its tool calls locally', () => {
    const fast = fastPath({ modelTurns: false });

    expect([modelTurnRunsLocally(fast), toolRunsLocally(fast, pay, false)]).toEqual([false, true]);
  });
});
