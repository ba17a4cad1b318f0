/**
 * The fused step of the fast path (docs/fast-path.md, "The fused step"): what the workflow passes with a local
 * model turn so that its activity (`callModelAndTools`) may run the turn's calls that the workflow would run as
 * local activities at once. Types only; the plan itself is `planFusedCalls` (src/workflows/fused-step-plan.ts),
 * which the worker gives the activity.
 */

import type { AgentRunInput, CostTable, RunUsage } from './agent-run-types';
import type { RunApprovalPolicy } from './approval-types';
import type { ModelSettings, ModelTurn, TranscriptMessage } from './model-types';
import type { FusedAttemptFailure, ToolActivityInput, ToolActivityResult } from './tool-activity-types';
import type { ToolCatalogEntry } from './tool-catalog-entry';
import type { ToolDisclosureBudget } from './tool-disclosure';

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
  /** Set when the step may chain the next turns (docs/fast-path.md, "Chained turns"). */
  chain?: FusedChain;
}

/** A clearance before the tools are known: what the first fused step of a run gets with {@link CatalogClearanceRules}. */
export type FusedClearanceBase = Omit<FusedClearance, 'tools'>;

/**
 * What the first fused step of a run clears the tools of the catalog it reads itself with (docs/fast-path.md, "The
 * first step"): the run input's word on its tools, and the longest attempt timeout a cleared tool may have.
 */
export interface CatalogClearanceRules {
  /** The run's `allowedTools` (all tools when absent). */
  allowedTools?: readonly string[];
  /** The run's approval policy (`{}` when it has none). */
  approval: RunApprovalPolicy;
  /** The run's `toolDisclosure` budget. */
  toolDisclosure?: ToolDisclosureBudget;
  /**
   * A tool whose attempt timeout is longer is not cleared: the step's own timeout is set before its catalog is
   * read (`FAST_PATH_LIMITS.maxToolTimeoutMs`; only a tool declared `execution: 'local'` can be longer).
   */
  maxToolTimeoutMs: number;
}

/** The tools a catalog clears under {@link CatalogClearanceRules}, and whether the model sees the summary view. */
export interface CatalogClearance {
  tools: ClearedTool[];
  disclosedOnDemand: boolean;
}

/** Clears a catalog's tools as the workflow would once it had the catalog (`clearCatalog`, fused-clearance.ts). */
export type CatalogClearer = (catalog: readonly ToolCatalogEntry[], rules: CatalogClearanceRules) => CatalogClearance;

/**
 * What a fused step needs to ask and run the next turns itself, and what the workflow checks before it asks a
 * turn: the fast path's local-call bound, the turn limit and when the generation would continue as new.
 */
export interface FusedChain {
  /** `${workflowId}/${runId}/turn/`: the key turn n is recorded under is this followed by n. */
  turnKeyPrefix: string;
  /** The run's key prefix: the key of step n is `${keyPrefix}/${n}` (`stepKey`). */
  keyPrefix: string;
  /** The most further turns the step may ask ({@link FAST_PATH_LIMITS.maxChainedTurns}). */
  maxTurns: number;
  /** No further turn is asked once the step has run this long, in ms. */
  budgetMs: number;
  /** The fast path's count of local calls in a row, this turn's local activity included. */
  localCalls: number;
  /** Its bound: a turn asked with this many local calls in a row is a regular activity. */
  maxLocalCallsPerTask: number;
  /** What `continueAsNewDue` reads before a turn; the suggestion as the workflow task started. */
  generation: {
    suggested: boolean;
    everySteps?: number;
    stepsThisGeneration: number;
    transcriptBytes: number;
  };
}

/** A call the fused step ran, matched by the workflow to its step (step id, tool, idempotency key). */
export interface FusedToolCall {
  stepId: number;
  tool: string;
  idempotencyKey: string;
  /** What the tool's activity returned (its output, attempt, `replayed`, arguments digest). */
  result: ToolActivityResult;
}

/**
 * A call the fused step ran whose attempt failed, the last it ran: the workflow runs it as its own local activity,
 * whose first attempt ends with this failure (`ToolActivityInput.fusedAttemptFailure`).
 */
export interface FusedFailedCall {
  stepId: number;
  tool: string;
  failure: FusedAttemptFailure;
}

/** A call the fused step runs: the tool and the very input the workflow would give its local activity. */
export interface FusedCall {
  tool: string;
  input: ToolActivityInput;
}

/** The calls of a turn the fused step runs, in order (the caller stops at the first that does not succeed). */
export type FusedCallPlanner = (turn: ModelTurn, settings: ModelSettings, clearance: FusedClearance) => FusedCall[];

/** A turn a fused step has taken: the turn, where its request's messages started, and the calls it ran. */
export interface TakenTurn {
  turn: ModelTurn;
  clearance: FusedClearance;
  /** The request's `turn` (turns taken before it) and the position and number of the messages it sent. */
  position: { turn: number; fromIndex: number; messageCount: number };
  executed: readonly FusedToolCall[];
}

/** The next turn of a chain: its request's place in the transcript, the messages it sends, its clearance. */
export interface NextChainedTurn {
  /** Turns taken before it (the request's `turn`). */
  turn: number;
  fromIndex: number;
  messages: TranscriptMessage[];
  clearance: FusedClearance;
}

/**
 * Whether the run would certainly ask the next turn as a local fused step right after the turn taken, and with
 * what: undefined when it would not (see `planChainedTurn`, src/workflows/fused-chain-plan.ts).
 */
export type ChainedTurnPlanner = (taken: TakenTurn, settings: ModelSettings) => NextChainedTurn | undefined;
