/**
 * The fused step of the fast path (docs/fast-path.md, "The fused step"): what the workflow passes with a local
 * model turn so that its activity (`callModelAndTools`) may run the turn's calls that the workflow would run as
 * local activities at once. Types only; the plan itself is `planFusedCalls` (src/workflows/fused-step-plan.ts),
 * which the worker gives the activity.
 */

import type { AgentRunInput, CostTable, RunUsage } from './agent-run-types';
import type { ModelSettings, ModelTurn } from './model-types';
import type { ToolActivityInput } from './tool-activity-types';
import type { ToolCatalogEntry } from './tool-catalog-entry';

/** A tool the workflow pre-cleared: every call of it would run as a local activity at once (fused-step.ts). */
export interface ClearedTool {
  /** The tool's entry in the run's catalog (the one recorded in history): what prepareCall and the size check read. */
  entry: ToolCatalogEntry;
  /** Whether a successful call of it is an unguarded irreversible one (`isIrreversibleForward`). */
  irreversible: boolean;
}

/** What the workflow knows before the turn that decides whether the turn's calls run: judgeTurn's inputs. */
export interface FusedVerdictContext {
  /** The run input's limits and failure policy (what judgeTurn reads of the input). */
  input: Pick<AgentRunInput, 'limits' | 'failurePolicy'>;
  /** The run's tool-call and turn limits (`runLimits`). */
  limits: { maxSteps: number; maxTurns: number };
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

/** The calls of a turn the fused step runs, in order (the caller stops at the first that does not succeed). */
export type FusedCallPlanner = (turn: ModelTurn, settings: ModelSettings, clearance: FusedClearance) => FusedCall[];
