/**
 * Two agent runs step by step: their tool calls aligned by step id, what differs at each step, and the first
 * step where they diverge. Pure: no server, no clock. `diffAgentRuns` reads the runs; `durable-tools diff`
 * prints the result.
 */
import type { RunUsage, RunUsageTotals, StepRecord, StepStatus, TurnUsage } from '../contract/agent-run-types';
import { canonicalJson } from '../stores/idempotency/canonical-json';

/** One run as {@link diffRuns} compares it: its status and steps, and what its state says besides. */
export interface RunToDiff {
  /** The run's workflow id. */
  workflowId: string;
  /**
   * The run's status (`completed`, `failed`, ...); for a run read from its history alone, its workflow's
   * status in lower case (`running`, `terminated`, ...).
   */
  status: string;
  /** The run's tool calls, as its state records them (arguments redacted and, when long, shortened). */
  steps: readonly StepRecord[];
  /** Model turns taken (unknown for a run read from its history alone). */
  turns?: number;
  /** Tool calls made over all generations (default: the number of `steps`). */
  stepCount?: number;
  /** Token usage and cost of the model turns (unknown for a run read from its history alone). */
  usage?: RunUsage;
  /** Continue-as-new generations before the current one: their steps are not in `steps`. */
  generation?: number;
  /** Oldest steps left out of the state to keep it within the payload budget. */
  omittedSteps?: number;
  /** True when no worker answered and the steps were rebuilt from the history. */
  fromHistory?: boolean;
}

/**
 * What differs at a step: the tool, the arguments (in their recorded form), the outcome, or the step exists in
 * one run only.
 */
export type StepDifference = 'tool' | 'arguments' | 'outcome' | 'only-in-a' | 'only-in-b';

/** One run's call at a step of the diff. */
export interface RunDiffStep {
  tool: string;
  /** The arguments as the run recorded them: sensitive fields redacted, long ones a shortened preview. */
  arguments: unknown;
  status: StepStatus;
  /** `ok`, the error code of a failed call, or the status of a call that has not ended (`running`, ...). */
  outcome: string;
  /** The error code, when the call failed. */
  errorCode?: string;
  /** The model turn that proposed the call. */
  turn: number;
  /** Tokens and cost of that model turn (shared by every call it proposed), when the run recorded them. */
  turnUsage?: TurnUsage;
}

/** One step of the diff: both runs' calls with that step id, and what differs. */
export interface RunDiffRow {
  stepId: number;
  /** Run a's call, `null` when run a has no such step. */
  a: RunDiffStep | null;
  /** Run b's call, `null` when run b has no such step. */
  b: RunDiffStep | null;
  /** What differs at this step (empty: the same call with the same outcome). */
  differences: StepDifference[];
}

/** One run's header line of the diff. */
export interface RunDiffHeader {
  workflowId: string;
  status: string;
  /** Tool calls made over all generations. */
  steps: number;
  /** Model turns, when known. */
  turns?: number;
  /** Token and cost totals of the model turns, when known. */
  usage?: RunUsageTotals;
  /** True when no worker answered and the steps were rebuilt from the history. */
  fromHistory?: boolean;
}

/** Two runs step by step ({@link diffRuns}). */
export interface RunDiff {
  a: RunDiffHeader;
  b: RunDiffHeader;
  /**
   * The first step id compared: 1, unless a run's state no longer holds its first steps (earlier generations
   * of a run that continued as new, or steps omitted for the payload budget).
   */
  comparedFrom: number;
  /** Every step id of either run from `comparedFrom` on, in order. */
  rows: RunDiffRow[];
  /** The first step whose tool, arguments or outcome differ, or that only one run has; `null` when none. */
  firstDivergence: number | null;
  /** What differs there first (tool, then arguments, then outcome); `null` when the runs do not diverge. */
  divergenceReason: StepDifference | null;
}

/** The order in which a step's differences are named: the tool first. */
const DIFFERENCE_ORDER: readonly StepDifference[] = ['only-in-a', 'only-in-b', 'tool', 'arguments', 'outcome'];

/**
 * Compares two runs step by step: aligns their tool calls by step id, says what differs at each step (the tool,
 * the arguments in their recorded form — redacted fields compare as `[redacted]`, key order does not matter —,
 * the outcome: `ok` or the error code), and finds the first divergence. A run with more steps diverges at the
 * first step the other does not have.
 *
 * @example
 * ```ts
 * const diff = diffRuns(runA, runB);
 * if (diff.firstDivergence !== null) console.log(`step ${diff.firstDivergence}: ${diff.divergenceReason}`);
 * ```
 */
export function diffRuns(a: RunToDiff, b: RunToDiff): RunDiff {
  const stepsA = stepsById(a.steps);
  const stepsB = stepsById(b.steps);
  const comparedFrom = Math.max(firstKeptStep(a, stepsA), firstKeptStep(b, stepsB));
  const ids = [...new Set([...stepsA.keys(), ...stepsB.keys()])].filter((id) => id >= comparedFrom);
  const [turnsA, turnsB] = [turnUsages(a), turnUsages(b)];
  const rows = ids
    .sort((x, y) => x - y)
    .map((stepId) => diffRow(stepId, diffStep(stepsA.get(stepId), turnsA), diffStep(stepsB.get(stepId), turnsB)));
  const first = rows.find((row) => row.differences.length > 0);
  return {
    a: header(a, stepsA.size),
    b: header(b, stepsB.size),
    comparedFrom,
    rows,
    firstDivergence: first?.stepId ?? null,
    divergenceReason: first?.differences[0] ?? null,
  };
}

/**
 * A run's steps by step id. A history can hold several records of one step (its compensation runs under the
 * same step id, after it): the first one is the call.
 */
function stepsById(steps: readonly StepRecord[]): Map<number, StepRecord> {
  const byId = new Map<number, StepRecord>();
  for (const step of steps) if (!byId.has(step.stepId)) byId.set(step.stepId, step);
  return byId;
}

/** The first step id a run's state still holds: 1 unless earlier steps are elsewhere (generations, omitted). */
function firstKeptStep(run: RunToDiff, steps: Map<number, StepRecord>): number {
  if (!(run.generation ?? 0) && !(run.omittedSteps ?? 0)) return 1;
  return steps.size > 0 ? Math.min(...steps.keys()) : (run.stepCount ?? 0) + 1;
}

/** A run's usage per model turn; none when its model reported no token counts at all. */
function turnUsages(run: RunToDiff): readonly TurnUsage[] {
  const usage = run.usage;
  if (!usage || usage.unreportedTurns >= (run.turns ?? usage.turns.length)) return [];
  return usage.turns;
}

function diffStep(step: StepRecord | undefined, turns: readonly TurnUsage[]): RunDiffStep | null {
  if (!step) return null;
  const observation = step.observation;
  const turnUsage = turns.find((turn) => turn.turn === step.turn);
  return {
    tool: step.tool,
    arguments: step.arguments,
    status: step.status,
    outcome: observation ? (observation.status === 'ok' ? 'ok' : observation.code) : step.status,
    ...(observation?.status === 'error' ? { errorCode: observation.code } : {}),
    turn: step.turn,
    ...(turnUsage ? { turnUsage } : {}),
  };
}

function diffRow(stepId: number, a: RunDiffStep | null, b: RunDiffStep | null): RunDiffRow {
  const differences = new Set<StepDifference>();
  if (!a) differences.add('only-in-b');
  if (!b) differences.add('only-in-a');
  if (a && b) {
    if (a.tool !== b.tool) differences.add('tool');
    if (comparable(a.arguments) !== comparable(b.arguments)) differences.add('arguments');
    if (a.outcome !== b.outcome) differences.add('outcome');
  }
  return { stepId, a, b, differences: DIFFERENCE_ORDER.filter((d) => differences.has(d)) };
}

/** Arguments as compared: canonical JSON (key order does not matter), or their text when they are not JSON. */
function comparable(args: unknown): string {
  if (args === undefined) return 'undefined';
  try {
    return canonicalJson(args);
  } catch {
    return String(args);
  }
}

/** A run's usage totals, without the per-turn list. */
function totalsOf({ turns: _turns, ...totals }: RunUsage): RunUsageTotals {
  return totals;
}

function header(run: RunToDiff, distinctSteps: number): RunDiffHeader {
  return {
    workflowId: run.workflowId,
    status: run.status,
    steps: run.stepCount ?? distinctSteps,
    ...(run.turns !== undefined ? { turns: run.turns } : {}),
    ...(run.usage ? { usage: totalsOf(run.usage) } : {}),
    ...(run.fromHistory ? { fromHistory: true } : {}),
  };
}
