import type { CostTable, RunUsage } from '../contract/agent-run-types';
import type { ModelSettings, ModelTurn } from '../contract/model-types';
import type { ToolActivityInput } from '../contract/tool-activity-types';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { prepareCall } from './prepared-call';
import { argumentsTooLarge } from './run-budget';
import type { LimitedInput, RunLimits } from './run-limits';
import { addTurnUsage } from './run-usage';
import { readTurn } from './turn-reading';
import { judgeTurn } from './turn-verdict';

/*
 * The part of the fused step (docs/fast-path.md, "The fused step") that both sides run: the workflow builds a
 * {@link FusedClearance} before the turn, and the activity `callModelAndTools`, once it has the turn, plans
 * with {@link planFusedCalls} which calls it runs itself. Pure, and nothing here imports
 * `@temporalio/workflow`, so the activity computes with the very functions the workflow uses.
 */

/** A tool the workflow pre-cleared: every call of it would run as a local activity at once (fused-step.ts). */
export interface ClearedTool {
  /** The tool's entry in the run's catalog (the one recorded in history): what prepareCall and the size check read. */
  entry: ToolCatalogEntry;
  /** Whether a successful call of it is an unguarded irreversible one (`isIrreversibleForward`). */
  irreversible: boolean;
}

/** What the workflow knows before the turn that decides whether the turn's calls run: judgeTurn's inputs. */
export interface FusedVerdictContext {
  /** The run input's limits and failure policy. */
  input: LimitedInput;
  limits: RunLimits;
  /** The run's usage before the turn. */
  usage: RunUsage;
  /** The run input's cost table (the turn's cost). */
  costTable?: CostTable;
  /** The number of the turn asked (`state.turns + 1`). */
  turnNumber: number;
  /** Tool calls so far, a sub-agent's included (what judgeTurn counts). */
  stepCount: number;
  /** Unusable turns in a row before this one. */
  turnIssues: number;
}

/** The pre-clearance a fused model turn carries: which of the turn's calls the activity may run itself. */
export interface FusedClearance {
  verdict: FusedVerdictContext;
  /** The tools pre-cleared; a call of any other tool stops the fused calls. */
  tools: ClearedTool[];
  /** The step id of the turn's first call (`state.stepCount + 1`). */
  firstStepId: number;
  /** `stepKey(scope, firstStepId + i)`: the idempotency keys of the first calls, as many as may be fused. */
  keys: string[];
  /** The run's owner (`ToolActivityInput.runKey`), when it has run-scoped keys. */
  runKey?: string;
  /** Whether an unguarded irreversible call already ran in the run (the effect-tier rule). */
  irreversibleDone: boolean;
}

/** A call the fused step runs: the tool and the very input the workflow would give its local activity. */
export interface FusedCall {
  tool: string;
  input: ToolActivityInput;
}

/**
 * The calls of the turn that the fused step runs, in order: none unless the workflow's verdict on the turn
 * will be to run its calls (judgeTurn on the usage after the turn), then the leading calls of pre-cleared
 * tools, up to the first that is not (another tool, arguments over the tool's budget, a compensable call after
 * an unguarded irreversible one) or the number of keys given. Everything after it the workflow runs itself.
 * The caller stops at the first call that does not succeed.
 */
export function planFusedCalls(turn: ModelTurn, settings: ModelSettings, clearance: FusedClearance): FusedCall[] {
  const { verdict } = clearance;
  const reading = readTurn(turn);
  const usage: RunUsage = structuredClone(verdict.usage);
  addTurnUsage(usage, verdict.turnNumber, turn, settings, verdict.costTable);
  const judged = judgeTurn(turn, reading, {
    input: verdict.input,
    limits: verdict.limits,
    usage,
    stepCount: verdict.stepCount,
    turnIssues: verdict.turnIssues,
  });
  if (judged.verdict.kind !== 'run-calls') return [];
  const planned: FusedCall[] = [];
  let irreversibleDone = clearance.irreversibleDone;
  for (const [index, call] of reading.calls.entries()) {
    const key = clearance.keys[index];
    if (key === undefined) break;
    const name = typeof call?.name === 'string' ? call.name : String(call?.name);
    const cleared = clearance.tools.find((tool) => tool.entry.name === name);
    if (!cleared) break;
    const prepared = prepareCall(call?.arguments, cleared.entry);
    if (argumentsTooLarge(prepared.raw, cleared.entry, prepared.bytes)) break;
    if (cleared.entry.effect === 'compensable' && irreversibleDone) break;
    const stepId = clearance.firstStepId + index;
    planned.push({
      tool: name,
      input: {
        arguments: prepared.raw,
        idempotencyKey: key,
        stepId,
        ...(clearance.runKey !== undefined ? { runKey: clearance.runKey } : {}),
      },
    });
    if (cleared.irreversible) irreversibleDone = true;
  }
  return planned;
}
