import { proxyActivities, proxyLocalActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import { getRunStateQuery } from '../contract/agent-run-messages';
import type { AgentRunInput, AgentRunState } from '../contract/agent-run-types';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { exceedsCatalogBudget } from '../contract/tool-disclosure';
import { modelVisibleTools, undoToolNames } from '../contract/tool-visibility';
import { ENGINE_ACTIVITY_OPTIONS } from './agent-run-defaults';
import { createApprovalGate, newApprovalGate } from './approval-gate';
import { joinApprovalDesk } from './approval-desk';
import { BackgroundCalls } from './background-calls';
import { forkOrigin, startFromForkedPrefix } from './forked-prefix';
import { dryRunRecord } from './dry-run-step';
import { checkEffectTiers } from './effect-tiers';
import { boundedRunView } from './run-budget';
import { setRunStatus } from './run-end';
import { runLimits } from './run-limits';
import { initialLoopCounters } from './run-loop-state';
import { runScope, subAgentScope, type RunScope } from './run-ownership';
import { RunTranscript } from './run-transcript';
import { initialRunUsage } from './run-usage';
import type { RunLoop, StepContext } from './run-types';
import type { FastRunLoop, FastStepContext } from './fused-step';
import { catalogReadLocally, fastPathDecidedFirst, fastPathOf, type FastPath } from './fast-path';
import { engineOf, withDefaultFastPath, type Engine } from './engine-patches';
import { askFirstStep, firstStepReadsCatalog, takeFirstStep } from './first-fused-step';
import { dryRunCalls } from './dry-run-calls';
import { fastPathCalls } from './fast-path-calls';
import { fastPathTurns } from './fast-path-turns';
import { activityTurns } from './run-turn';
import { activityCalls } from './tool-step';

interface CatalogActivities {
  describeTools(names?: readonly string[]): Promise<ToolCatalogEntry[]>;
}

const { describeTools } = proxyActivities<CatalogActivities>(ENGINE_ACTIVITY_OPTIONS.describeTools);
const { describeTools: describeToolsLocally } = proxyLocalActivities<CatalogActivities>({
  ...ENGINE_ACTIVITY_OPTIONS.describeTools,
  summary: 'tool catalog',
});

/**
 * The worker's tool catalog, recorded in history: a regular activity, or on the fast path a local one (a
 * marker; no server round trip). Either way every worker of the task queue has the same tools.
 */
function readCatalog(input: AgentRunInput, current: boolean): Promise<ToolCatalogEntry[]> {
  return catalogReadLocally(input, current) ? describeToolsLocally() : describeTools();
}

/**
 * How a run embedded in a user's own workflow (`runAgent` of durable-tools/workflow) differs from an `agentRun`:
 * its keys live under its own call's key (two agents of one workflow, or of two runs of its chain, never share
 * one), its transcript under that key, and its query and approvals go through the workflow's approval desk.
 */
export interface Embedding {
  scope: RunScope;
  /** The model activity's key of the run (its transcript's): the call's key. */
  modelRunKey: string;
  /** Keep the `DurableAwaitingApproval` search attribute up to date (the namespace must have it registered). */
  trackApprovalSearchAttribute: boolean;
  /** Called with the generation's loop once built: a conversation's turn adds its own (conversation-turn.ts). */
  opened?(run: RunLoop): void;
  /** The conversation whose message the run answers (its workflow id), for telemetry (`gen_ai.conversation.id`). */
  conversationId?: string;
}

function initialState(input: AgentRunInput, keyPrefix: string): AgentRunState {
  const carried = input.carriedOver;
  return {
    workflowId: workflowInfo().workflowId,
    runId: workflowInfo().workflowId,
    runKey: keyPrefix,
    goal: input.goal,
    status: 'running',
    turns: carried?.turns ?? 0,
    stepCount: carried?.stepCount ?? 0,
    generation: carried?.generation ?? 0,
    steps: [],
    policyWarnings: [],
    usage: initialRunUsage(carried?.usage),
    ...(carried?.subAgentSteps ? { subAgentSteps: carried.subAgentSteps } : {}),
    ...(input.subAgent
      ? { parent: { workflowId: input.subAgent.parentWorkflowId, stepId: input.subAgent.parentStepId } }
      : {}),
    ...(input.fork ? { forkedFrom: forkOrigin(input.fork) } : {}),
    ...(input.dryRun
      ? { dryRun: { sourceWorkflowId: input.dryRun.sourceWorkflowId, readOnlyTools: input.dryRun.readOnlyTools } }
      : {}),
  };
}

/** A generation started: its run loop, and the failure of its first turn when its first step asked it. */
export interface StartedRun {
  run: RunLoop;
  /** The first turn's failure (first-fused-step.ts): the run ends with it as the loop would. */
  failure?: unknown;
}

/**
 * Starts a generation: its state (and the state query), the approval gate, the catalog (recorded in history),
 * what the model may see, and what the previous generation carried over. On the fast path a run's first step
 * reads the catalog and asks the first turn at once (first-fused-step.ts).
 */
export async function startRunLoop(given: AgentRunInput, embedding?: Embedding): Promise<StartedRun> {
  const opening = openGeneration(given, embedding);
  const { engine, decidedFirst, input } = opening;
  if (firstStepReadsCatalog(opening, decidedFirst, engine)) {
    const first = await askFirstStep({ ...opening, fastPath: decidedFirst }, () => describeToolsLocally());
    const run = buildRunLoop(opening, first.catalog);
    if (embedding) run.embedded = true;
    embedding?.opened?.(run);
    takeFirstStep(run, first);
    return first.failure !== undefined ? { run, failure: first.failure } : { run };
  }
  const run = buildRunLoop(opening, await readCatalog(input, engine.current));
  if (embedding) run.embedded = true;
  embedding?.opened?.(run);
  return { run };
}

/** What a generation knows before its catalog. */
interface Opening extends Pick<RunLoop, 'input' | 'state' | 'transcript' | 'counters' | 'limits' | 'modelRunKey'> {
  engine: Engine;
  step: Pick<StepContext, 'scope' | 'approvals' | 'irreversibleDone'>;
  background: { outstanding: number };
  /** The fast path decided before the first local activity, when the history records that order. */
  decidedFirst: FastPath | undefined;
}

/** The generation before its catalog: its patches, keys, state (and query), approval gate, transcript, counters. */
function openGeneration(given: AgentRunInput, embedding?: Embedding): Opening {
  const { workflowId, firstExecutionRunId } = workflowInfo();
  const carried = given.carriedOver;
  // One patch for the engine's earlier ones, before anything else (engine-patches.ts).
  const engine = engineOf(given);
  // The fast path by default, as of that patch: the generation (and the next ones, its sub-agents) run with it.
  const input = withDefaultFastPath(given, engine, embedding !== undefined);
  // Keys, compensations and claim checks belong to this run, not to its workflow id (run-ownership.ts).
  const scope =
    embedding?.scope ?? (input.subAgent ? subAgentScope(input.subAgent.callKey) : runScope(carried, engine.current));
  const state = initialState(input, scope.keyPrefix);
  const approvals = embedding
    ? newApprovalGate(workflowId, state, input.approval, embedding.trackApprovalSearchAttribute)
    : createApprovalGate(workflowId, state, input.approval, input.trackApprovalSearchAttribute === true);
  if (embedding) joinApprovalDesk(approvals, () => state);
  else setHandler(getRunStateQuery, () => boundedRunView(state));
  if (!carried) setRunStatus(state, 'running', input);
  // Decided before the first local activity: a patch evaluated just after one may fall into the next task.
  const decidedFirst = fastPathDecidedFirst(input, engine.current);
  const transcript = carried
    ? new RunTranscript({ cursor: carried.transcriptCursor, unsent: carried.unsentMessages ?? [] })
    : new RunTranscript({ goal: input.goal });
  return {
    input,
    engine,
    state,
    step: { scope, approvals, irreversibleDone: carried?.irreversibleDone ?? false },
    background: { outstanding: 0 },
    transcript,
    counters: initialLoopCounters(carried),
    limits: runLimits(input),
    modelRunKey: embedding?.modelRunKey ?? `${workflowId}/${firstExecutionRunId}`,
    decidedFirst,
  };
}

/** The generation with its catalog: what the model may see, the disclosure, the step context, the carry-over. */
function buildRunLoop(opening: Opening, catalog: ToolCatalogEntry[]): FastRunLoop {
  const { input, state, transcript, limits } = opening;
  // Undo tools are never the model's: they run only as compensations, whatever allowedTools says.
  const visible = new Set(modelVisibleTools(catalog, input.allowedTools).map((entry) => entry.name));
  state.policyWarnings = checkEffectTiers(catalog, visible, input.approval);
  // Progressive disclosure: over the catalog budget, the model sees names, one-line descriptions and
  // describe_tools; the engine still checks every call against the full schema.
  const disclosedOnDemand = exceedsCatalogBudget(
    catalog.filter((entry) => visible.has(entry.name)),
    input.toolDisclosure,
  );
  if (disclosedOnDemand) state.toolsDisclosedOnDemand = true;
  const fastPath = opening.decidedFirst ?? fastPathOf(input);
  const step = stepContextOf(opening, catalog, visible, fastPath);
  // A forked run's first generation starts after the source's recorded steps (docs/fork.md).
  if (!input.carriedOver && input.fork) startFromForkedPrefix(state, transcript, input.fork);
  const run: FastRunLoop = {
    input,
    state,
    step,
    transcript,
    background: new BackgroundCalls(step),
    counters: opening.counters,
    limits,
    disclosedOnDemand,
    modelRunKey: opening.modelRunKey,
    turns: activityTurns(input.model),
    fastPath,
  };
  // The generation's turn source and call executor, chosen once: the fast path's, or the regular activities;
  // in a dry run, each call goes to its tool's dry-run twin wherever it runs.
  if (fastPath.on) {
    run.turns = fastPathTurns(run);
    step.calls = fastPathCalls(step);
  }
  if (step.dryRun) step.calls = dryRunCalls(step, step.dryRun, step.calls);
  return run;
}

/** What each tool step of the generation gets: keys, catalog, visible tools, compensations owed, approvals. */
function stepContextOf(
  opening: Opening,
  catalog: ToolCatalogEntry[],
  visible: ReadonlySet<string>,
  fastPath: FastPath,
): FastStepContext {
  const { input, state, transcript, limits } = opening;
  const carried = input.carriedOver;
  const step: FastStepContext = {
    ...opening.step,
    calls: activityCalls,
    fastPath,
    state,
    catalog: new Map(catalog.map((entry) => [entry.name, entry])),
    visible,
    undoTools: undoToolNames(catalog),
    pending: [...(carried?.compensations ?? [])],
  };
  const dryRun = dryRunRecord(input, carried);
  if (dryRun) step.dryRun = dryRun;
  step.subAgents = {
    input,
    limits,
    conversation: () => transcript.held(),
    // Since the fast path became the default, a child takes its parent's (its opt-out too).
    ...(opening.engine.fastByDefault ? { lendsFastPath: true } : {}),
  };
  return step;
}
