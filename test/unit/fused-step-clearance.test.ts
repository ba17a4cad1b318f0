import type { AgentRunInput, AgentRunState } from '../../src/contract/agent-run-types';
import type { RunApprovalPolicy } from '../../src/contract/approval-types';
import { FAST_PATH_LIMITS } from '../../src/contract/fast-path';
import type { ToolCatalogEntry } from '../../src/contract/tool-catalog-entry';
import { DESCRIBE_TOOLS_TOOL } from '../../src/contract/tool-disclosure';
import type { FastPath } from '../../src/workflows/fast-path';
import { clearsTool, type ClearanceContext } from '../../src/workflows/fused-clearance';
import { fusedClearance, fusedStepOptions, type FastRunLoop } from '../../src/workflows/fused-step';
import { initialRunUsage } from '../../src/workflows/run-usage';
import { fastPathState, PAY_ENTRY } from '../support/fast-path-fixtures';

/**
 * Which tools a fused step may run itself (fused-step.ts): only those every call of which the workflow would run
 * as a local activity at once, with no other command before it.
 */

const pay = PAY_ENTRY;
const fast = fastPathState;

function context(
  fields: { policy?: RunApprovalPolicy; fastPath?: FastPath; disclosed?: boolean; background?: string[] } = {},
): ClearanceContext {
  return {
    step: {
      fastPath: fields.fastPath ?? fast(),
      undoTools: new Set(['refund']),
      approvals: { policy: fields.policy ?? {} } as ClearanceContext['step']['approvals'],
    },
    disclosedOnDemand: fields.disclosed ?? false,
    background: { handles: (call) => (fields.background ?? []).includes(call.name) },
  };
}

describe('the pre-clearance of a tool for fused steps', () => {
  test('clears a short tool that never needs approval', () => {
    expect(clearsTool(pay, context())).toBe(true);
  });

  test('clears a tool the run says never needs approval only if the tool says so too', () => {
    expect(clearsTool(pay, context({ policy: { tools: { pay: 'never' } } }))).toBe(true);
    expect(clearsTool({ ...pay, approval: 'conditional' }, context({ policy: { tools: { pay: 'never' } } }))).toBe(
      false,
    );
  });

  test('does not clear a tool that may need approval', () => {
    expect(clearsTool({ ...pay, approval: 'always' }, context())).toBe(false);
    expect(clearsTool({ ...pay, approval: 'conditional' }, context())).toBe(false);
  });

  test('does not clear a tool the run makes need approval', () => {
    expect(clearsTool(pay, context({ policy: { tools: { pay: 'always' } } }))).toBe(false);
    expect(clearsTool(pay, context({ policy: { requireForEffects: true } }))).toBe(false);
  });

  test('does not clear a tool with an undo tool, nor an undo tool', () => {
    expect(clearsTool({ ...pay, effect: 'compensable', undo: 'refund' }, context())).toBe(false);
    expect(clearsTool({ ...pay, name: 'refund' }, context())).toBe(false);
  });

  test('does not clear a tool that runs as a regular activity', () => {
    expect(clearsTool({ ...pay, timeoutMs: FAST_PATH_LIMITS.maxToolTimeoutMs + 1 }, context())).toBe(false);
    expect(clearsTool({ ...pay, execution: 'activity' }, context())).toBe(false);
    expect(clearsTool({ ...pay, longCall: {} as ToolCatalogEntry['longCall'] }, context())).toBe(false);
    expect(clearsTool({ ...pay, asyncJob: {} as ToolCatalogEntry['asyncJob'] }, context())).toBe(false);
    expect(clearsTool(pay, context({ fastPath: fast({ on: false }) }))).toBe(false);
  });

  test('clears a read-only tool declared local whatever its timeout', () => {
    const local = { ...pay, effect: 'read-only' as const, execution: 'local' as const, timeoutMs: 60_000 };
    expect(clearsTool(local, context())).toBe(true);
  });

  test('does not clear an agent tool or a handoff', () => {
    expect(clearsTool({ ...pay, agent: {} }, context())).toBe(false);
    expect(clearsTool({ ...pay, agent: { handoff: true } }, context())).toBe(false);
  });

  test('does not clear a fetch-later tool the run calls in the background', () => {
    expect(clearsTool(pay, context({ background: ['pay'] }))).toBe(false);
  });

  test('does not clear describe_tools when the catalog is disclosed on demand', () => {
    expect(clearsTool({ ...pay, name: DESCRIBE_TOOLS_TOOL }, context({ disclosed: true }))).toBe(false);
  });
});

function runLoop(
  fields: { input?: Partial<AgentRunInput>; fastPath?: FastPath; dryRun?: boolean; entries?: ToolCatalogEntry[] } = {},
): FastRunLoop {
  const entries = fields.entries ?? [pay];
  const state = { stepCount: 4, turns: 2, usage: initialRunUsage(), subAgentSteps: 3 } as AgentRunState;
  const step = {
    ...context({ fastPath: fields.fastPath ?? fast() }).step,
    scope: { keyPrefix: 'wf/run1', runKey: 'wf/run1' },
    state,
    catalog: new Map(entries.map((entry) => [entry.name, entry])),
    visible: new Set(entries.map((entry) => entry.name)),
    pending: [],
    irreversibleDone: false,
    ...(fields.dryRun ? { dryRun: {} } : {}),
  };
  return {
    input: { goal: 'g', model: { provider: 'scripted' }, ...fields.input },
    state,
    step,
    background: { handles: () => false },
    counters: { consecutiveTurnIssues: 1 },
    limits: { maxSteps: 50, maxTurns: 25 },
    disclosedOnDemand: false,
    fastPath: fields.fastPath ?? fast(),
  } as unknown as FastRunLoop;
}

describe('the pre-clearance of a turn', () => {
  test('gives the keys and step ids the steps of the turn will have, and what judgeTurn needs', () => {
    const clearance = fusedClearance(runLoop({ input: { limits: { maxSteps: 9 } } }))!;
    expect(clearance.firstStepId).toBe(5);
    expect(clearance.keys).toHaveLength(FAST_PATH_LIMITS.maxFusedCallsPerStep);
    expect(clearance.keys.slice(0, 2)).toEqual(['wf/run1/5', 'wf/run1/6']);
    expect(clearance.runKey).toBe('wf/run1');
    expect(clearance.verdict).toMatchObject({
      input: { limits: { maxSteps: 9 } },
      turnNumber: 3,
      stepCount: 7,
      turnIssues: 1,
    });
    expect(clearance.tools).toEqual([{ entry: pay, irreversible: true }]);
    expect(clearance.verdict.usage.turns).toEqual([]);
  });

  test('is none without fused steps, with parallel tool calls, in a dry run or when no tool is cleared', () => {
    expect(fusedClearance(runLoop({ fastPath: fast({ fused: false }) }))).toBeUndefined();
    expect(fusedClearance(runLoop({ input: { parallelToolCalls: true } }))).toBeUndefined();
    expect(fusedClearance(runLoop({ dryRun: true }))).toBeUndefined();
    expect(fusedClearance(runLoop({ entries: [{ ...pay, approval: 'always' }] }))).toBeUndefined();
  });

  test('gives the fused step room for its calls in its timeout, and a summary within the limit', () => {
    const clearance = fusedClearance(runLoop())!;
    const options = fusedStepOptions({ provider: 'scripted' }, 'model turn 3 (scripted)', clearance);
    const turnOnly = fusedStepOptions({ provider: 'scripted' }, 'x', { ...clearance, keys: [] });
    expect(options.startToCloseTimeout).toBe(
      (turnOnly.startToCloseTimeout as number) + FAST_PATH_LIMITS.maxFusedCallsPerStep * pay.timeoutMs,
    );
    expect(options.summary).toBe('model turn 3 (scripted) · then pay');
    expect(fusedStepOptions({ provider: 'scripted' }, 'y'.repeat(200), clearance).summary!.length).toBe(120);
  });
});
