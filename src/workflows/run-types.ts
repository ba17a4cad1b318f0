import type { CallModelInput } from '../activities/model-activities';
import type { AgentRunInput, AgentRunState, PendingCompensation, StepRecord } from '../contract/agent-run-types';
import type { ModelToolCall, ModelTurn, TranscriptMessage } from '../contract/model-types';
import type { ToolActivityInput, ToolActivityResult } from '../contract/tool-activity-types';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import type { ApprovalGate } from './approval-gate';
import type { DryRunRecord } from './dry-run-step';
import type { RunLimits } from './run-limits';
import type { LoopCounters } from './run-loop-state';
import type { RunScope } from './run-ownership';
import type { RunTranscript } from './run-transcript';
import type { CompensationOutcome } from './saga';
import type { SummaryMarks } from './tool-call-options';

/*
 * The shapes the run loop's modules pass each other: types only, so every module of the loop can name them
 * without importing another module of the loop (no import circle in src/workflows, test/unit/architecture.test.ts).
 */

/** What a step needs from its run. */
export interface StepContext {
  /** How the generation's calls run past their gates: chosen once per generation (run-loop.ts). */
  calls: CallExecutor;
  /** The run's keys and owner: `${workflowId}/${firstExecutionRunId}/${stepId}` (run-ownership.ts). */
  scope: RunScope;
  state: AgentRunState;
  /** Every tool of the worker (undo tools included). */
  catalog: ReadonlyMap<string, ToolCatalogEntry>;
  /** Tools the model may call in this run. */
  visible: ReadonlySet<string>;
  undoTools: ReadonlySet<string>;
  /** Compensations owed, oldest first. */
  pending: PendingCompensation[];
  irreversibleDone: boolean;
  /** The run's approval gate. */
  approvals: ApprovalGate;
  /** What calls of agent tools need from the run (sub-agent-call.ts). */
  subAgents?: SubAgentCalls;
  /** Set in a dry run: the source's record that answers calls with effects (dry-run-step.ts). */
  dryRun?: DryRunRecord;
}

/**
 * What a run lends its agent tools' calls (sub-agent-call.ts): its input (an MCP call has no model of its own:
 * `model` is optional) and limits, its conversation, and where a handoff ends.
 */
export interface SubAgentCalls {
  input: Omit<AgentRunInput, 'model'> & { model?: AgentRunInput['model'] };
  limits: RunLimits;
  /** The messages of the run's transcript this generation holds (a handoff passes them on). */
  conversation(): readonly TranscriptMessage[];
  /** Set when a handoff's child completed: the run ends with this answer. */
  handoffAnswer?: string;
  /**
   * The children take the run's `fastPath` (and a workflow task timeout fit for it), as runs whose engine has the
   * fast path by default do (`ENGINE_FAST_DEFAULT_PATCH`); unset, a child's input says nothing of it, as before.
   */
  lendsFastPath?: boolean;
}

/** What a run does with background calls still running when it finishes (the model gave its answer). */
export type BackgroundCallsOnFinish = 'wait' | 'cancel';

/** The run's calls of fetch-later tools, running in the background (background-calls.ts). */
export interface RunBackground {
  /** Calls still running. */
  readonly outstanding: number;
  /** Whether this call is for the background machinery: a fetch-later tool, or `fetch_tool_result`. */
  handles(call: ModelToolCall): boolean;
  /** Runs the call: a fetch-later tool starts in the background, `fetch_tool_result` answers. */
  run(call: ModelToolCall): Promise<StepRecord>;
  /** Background steps that ended `failed` since the last call, each returned once. */
  takeFailures(): StepRecord[];
  /** Waits for every background call to finish. */
  waitAll(): Promise<void>;
  /** Cancels every background call still running, waits until each has stopped; returns their step ids. */
  cancelAll(): Promise<Set<number>>;
  /** The run's answer is in while calls still run: wait for them, or cancel them and run what they owe. */
  finish(onFinish: BackgroundCallsOnFinish, options: { parallel?: boolean }): Promise<CompensationOutcome | undefined>;
}

/**
 * Everything one generation of a run works with, passed explicitly to each step of the loop: the input, the
 * run state the query shows, what a tool step needs, the transcript, the background calls and the counters.
 */
export interface RunLoop {
  input: AgentRunInput;
  state: AgentRunState;
  /** What each tool step gets: keys, catalog, visible tools, compensations owed, approvals. */
  step: StepContext;
  transcript: RunTranscript;
  /** Calls of fetch-later tools running in the background; a run without such a tool issues no command for them. */
  background: RunBackground;
  counters: LoopCounters;
  limits: RunLimits;
  /** Over the catalog budget, the model sees a summary view and `describe_tools`. */
  disclosedOnDemand: boolean;
  /** The model activity's key of the run: `${workflowId}/${firstExecutionRunId}`. */
  modelRunKey: string;
  /** Where the generation's model turns come from: chosen once per generation (run-loop.ts). */
  turns: TurnSource;
  /** Set when the run is embedded in a user's workflow (`runAgent`): it never continues the workflow as new. */
  embedded?: true;
  /** Tools the model sees besides the worker's: a conversation's `undo_step` (conversation-undo.ts). */
  extraModelTools?: ToolCatalogEntry[];
  /** A conversation's turn: the conversation continues as new between its messages, never inside a turn. */
  continuesBetweenTurns?: true;
}

/**
 * Where a generation's model turns come from, chosen once per generation (run-loop.ts): the model activity
 * (run-turn.ts), or the fast path's local turns and fused steps (fast-path-turns.ts). run-turn.ts asks through it.
 */
export interface TurnSource {
  /** Opens the next turn: a turn already asked ahead (its calls ran with it), or how to ask it. */
  open(): OpenedTurn;
  /** Whether turns asked ahead wait that the run has not taken: it does not continue as new until it has. */
  holdsTurnsAhead(): boolean;
}

/** The next turn: asked ahead, or the call that asks it, made once per turn with the turn's summary. */
export type OpenedTurn =
  { ready: ModelTurn } | { caller(summary: string): (request: CallModelInput) => Promise<ModelTurn> };

/**
 * How a generation's tool calls run past their gates, chosen once per generation (run-loop.ts): as activities
 * (tool-step.ts), or on the fast path as local activities, some already run ahead (fast-path-calls.ts).
 */
export interface CallExecutor {
  /** Starts the call as an activity (or a local one), or gives its result at once when it already ran. */
  start(call: ExecutedCall): StartedCall;
  /**
   * A call of a turn asked ahead that already ran, settled at once without a promise; undefined, with nothing
   * changed, when the call must run as usual (run-calls.ts).
   */
  settleRan?(call: ModelToolCall): StepRecord | undefined;
}

/** A call past its gates, as the executor runs it. */
export interface ExecutedCall {
  entry: ToolCatalogEntry;
  stepId: number;
  /** The tool's name, or its dry-run twin's (dry-run-types.ts). */
  activityType: string;
  input: ToolActivityInput;
  /** The arguments with their sensitive fields redacted, for the activity's summary. */
  redacted: unknown;
  summarized: SummaryMarks;
  /** Whether a human approved the call. */
  approved: boolean;
}

/** A call started: its result at once (it already ran), or the activity or child that runs it. */
export type StartedCall = { ran: ToolActivityResult } | { running: Promise<ToolActivityResult> };
