/**
 * Input, state and result of an agent run. Pure types: shared by the workflow, the client and the worker.
 */
import type { ToolProgress } from './tool-progress';
import type { ToolWaiting } from './tool-limits';
import type { ModelProviderWait } from './model-outage';
import type { RunApprovalPolicy, StepApproval } from './approval-types';
import type { ModelSettings, ModelTurnIssue, TranscriptMessage } from './model-types';
import type { ToolObservation } from './activity-protocol';
import type { ToolDisclosureBudget } from './tool-disclosure';
import type { FastPathSetting } from './fast-path';
import type { AgentRunDryRun, DryRunReadOnlyTools, DryRunStepAnswer } from './dry-run-types';
import type { AgentOutputSpec } from './agent-output';

/** Limits that end a run that does not finish by itself. */
export interface AgentRunLimits {
  /** Maximum number of tool calls in the run, over all continue-as-new generations (default 50). */
  maxSteps?: number;
  /** Maximum number of model turns (default 25). */
  maxTurns?: number;
  /** The run stops (under its failure policy) once its model turns used this many input tokens. */
  maxInputTokens?: number;
  /** The run stops (under its failure policy) once its model turns used this many output tokens. */
  maxOutputTokens?: number;
  /** The run stops once its model turns cost this much, in the currency of `costTable`. */
  maxCost?: number;
  /**
   * With `parallelToolCalls`: the calls of a turn in flight at once (default 8); the rest of the turn's calls
   * queue and start as earlier ones end (docs/limits.md, "Fan-out").
   */
  maxConcurrentCalls?: number;
}

/** Prices of one model, per million tokens, in any one currency. */
export interface TokenPrices {
  inputPerMillionTokens: number;
  outputPerMillionTokens: number;
  /** Input tokens served from the provider's cache (default: the input price). */
  cachedInputPerMillionTokens?: number;
}

/** Prices by model id (a key may be a prefix of the id the provider reports); `'*'` prices any other model. */
export type CostTable = Record<string, TokenPrices>;

/**
 * When a failed tool call aborts the run (and so triggers compensation of what was done).
 * Without a policy a failed call is only an observation: the model decides what to do next.
 */
export interface FailurePolicy {
  /**
   * A failed call of any of these tools aborts the run (and compensates), whatever the failure: permanent,
   * retries or time spent, timeout, OUTCOME_UNKNOWN, tool missing on the worker, refused arguments.
   * `'*'` means every tool.
   */
  criticalTools?: readonly string[] | '*';
  /** This many failed tool calls in a row abort the run. */
  maxConsecutiveToolErrors?: number;
  /** Compensate when a step or turn limit ends the run (default true). */
  compensateOnLimit?: boolean;
}

/** How compensations run. */
export interface CompensationOptions {
  /** Run all compensations at once instead of one by one in reverse order (default false). */
  parallel?: boolean;
}

/** What a client passes to start an agent run. */
export interface AgentRunInput {
  /** What the user wants done, in words. */
  goal: string;
  /** Which model to use; `{ provider: 'scripted', script }` runs offline. */
  model: ModelSettings;
  /**
   * The agent's name, for telemetry: its runs' `invoke_agent <name>` span and `gen_ai.agent.name`
   * (docs/telemetry.md). `startAgent` and conversations of a defined agent set it to the agent's `name`.
   */
  agentName?: string;
  /**
   * The agent's standing instructions: every provider gets them as the system prompt of every turn, after the
   * engine's own (docs/agents.md). A sub-agent gets its own agent's.
   */
  instructions?: string;
  /**
   * The shape of the final answer (docs/agents.md, "Typed answers"): a JSON object the worker validates like tool
   * arguments; a wrong answer is an observation the model corrects, never a completed run. Set by `defineAgent`'s
   * `output` (from its zod schema).
   */
  output?: AgentOutputSpec;
  /** Tool names the model may see and call; all tools of the worker when omitted. */
  allowedTools?: string[];
  limits?: AgentRunLimits;
  failurePolicy?: FailurePolicy;
  /** Run the tool calls of one model turn concurrently (default: one after another). */
  parallelToolCalls?: boolean;
  /**
   * The fast path (docs/fast-path.md): short tool calls and the model turns run as local activities inside
   * one workflow task, for the calls that qualify (short, no heartbeats, no approval, no async job). Default: on
   * with the default settings (runs started before the default replay as they were recorded); `false` keeps every
   * step a regular activity; `true` or the settings as given. Sub-agents take their parent's.
   */
  fastPath?: FastPathSetting;
  compensation?: CompensationOptions;
  /**
   * Calls of fetch-later tools (`asyncJob.fetchLater`) run in the background. When the model finishes while
   * some still run, `'wait'` (default) waits for them (their results are in the run's steps); `'cancel'`
   * cancels them and runs the compensations they owe. A failed or cancelled run always cancels them before
   * it compensates; a run continues as new only once none is running.
   */
  backgroundCalls?: { onFinish?: 'wait' | 'cancel' };
  /** Prices per model, to count the run's cost (and enforce `limits.maxCost`). */
  costTable?: CostTable;
  /**
   * Above this catalog budget the model sees names and one-line descriptions plus the built-in
   * `describe_tools` (default: more than 30 tools or 8,000 schema tokens).
   */
  toolDisclosure?: ToolDisclosureBudget;
  /** Approval overrides, timeout and what a rejection does (see {@link RunApprovalPolicy}). */
  approval?: RunApprovalPolicy;
  /**
   * Continue as new after this many tool calls in one generation (default: when Temporal suggests it).
   * Keeps histories far from Temporal's limits on long runs.
   */
  continueAsNewAfterSteps?: number;
  /**
   * Keep the `DurableRunStatus` search attribute up to date. Set by the client helpers when the server
   * has the attribute registered (an unregistered attribute would fail the workflow task).
   */
  trackStatusSearchAttribute?: boolean;
  /**
   * Keep the `DurableAwaitingApproval` search attribute up to date. Set by the client helpers when the server
   * has the attribute registered.
   */
  trackApprovalSearchAttribute?: boolean;
  /**
   * The recorded prefix of another run this run is forked from (set by `forkAgentRun`): its steps are taken as
   * recorded (no tool runs, no model is asked for them) and the run goes on from the next step. See docs/fork.md.
   */
  fork?: AgentRunFork;
  /**
   * Set by the parent when this run is a sub-agent (an agent tool's child workflow; docs/sub-agents.md): its
   * keys live under the parent's call key, and a completed child returns the compensations it owes. Never set
   * by clients.
   */
  subAgent?: SubAgentLink;
  /**
   * Makes the run dry (set by `forkAgentRun` with `dryRun`): no call with effects runs; each is answered from
   * this record of the source run or refused with `DRY_RUN_NO_RECORD`. See docs/fork.md.
   */
  dryRun?: AgentRunDryRun;
  /** Set by the workflow itself when it continues as new; never by clients. */
  carriedOver?: AgentRunCarryOver;
}

/**
 * The recorded prefix a forked run starts from: the source run's steps 1 to `fromStep - 1`, as the source
 * recorded them (redacted arguments, bounded observations; claim-checked outputs as their previews).
 */
export interface AgentRunFork {
  /** Workflow id of the source run. */
  sourceWorkflowId: string;
  /** The source run's key (`${workflowId}/${firstExecutionRunId}`): the forked steps' effects are under it. */
  sourceRunKey?: string;
  /** The first step this run takes itself; steps before it are the source's. */
  fromStep: number;
  /** Model turns of the source up to the last forked step (the fork's next turn is this + 1). */
  turns: number;
  /** The source's step records 1 to `fromStep - 1`, in order. */
  steps: StepRecord[];
}

/** Where a forked step record comes from: the step of the source run it was taken from (docs/fork.md). */
export interface ForkedStepOrigin {
  /** Workflow id of the source run; the step's effects belong to that run, which alone may compensate them. */
  workflowId: string;
  /** The source run's key, when it has one. */
  runKey?: string;
}

/** What ties a sub-agent run to the parent call that started it. */
export interface SubAgentLink {
  /** The parent run's workflow id. */
  parentWorkflowId: string;
  /** The parent's step that called the agent tool. */
  parentStepId: number;
  /** The agent tool's name. */
  tool: string;
  /** The parent call's idempotency key: every key of the child starts with `${callKey}/`. */
  callKey: string;
  /** The child is a handoff: it was given the parent's conversation, and the parent ends with its answer. */
  handoff?: boolean;
}

/** A compensation the run owes: registered before its forward call, dropped only when that call had no effect. */
export interface PendingCompensation {
  stepId: number;
  /** The forward tool. */
  tool: string;
  /** The tool that undoes it. */
  undo: string;
  /** The forward call's raw arguments. */
  arguments: unknown;
  /** The forward call's output, when it is known. */
  output?: unknown;
  /** The forward call's idempotency key; the compensation runs under `${key}/undo`. */
  idempotencyKey: string;
  /** The forward call's span, when the run is traced: the compensation's span links to it. */
  span?: { traceId: string; spanId: string; traceFlags: number };
  /**
   * The run that owns the forward call's stored data, when it is not the compensating run's own: a sub-agent
   * that completed hands its compensations to its parent, which runs them under the child's keys and owner.
   */
  runKey?: string;
  /** The sub-agent whose compensation this is (its workflow id), when the parent runs it. */
  subAgentWorkflowId?: string;
}

/** What one generation hands to the next when the run continues as new. */
export interface AgentRunCarryOver {
  /** Continue-as-new generations so far (1 after the first). */
  generation: number;
  /** Tool calls made so far: the next step id is this + 1. */
  stepCount: number;
  /** Model turns taken so far. */
  turns: number;
  consecutiveToolErrors: number;
  /** Compensations owed, oldest first. */
  compensations: PendingCompensation[];
  /** Length of the transcript the transcript store holds for this run. */
  transcriptCursor: number;
  /** Messages after the cursor that the store does not have yet (the last turn's call and observations). */
  unsentMessages: TranscriptMessage[];
  /** An irreversible step without approval has succeeded: compensable steps are refused from now on. */
  irreversibleDone: boolean;
  /**
   * The run's keys carry its first execution's run id (`${workflowId}/${firstExecutionRunId}/${stepId}`);
   * absent for runs started before run-scoped keys, which keep `${workflowId}/${stepId}` to the end.
   */
  runScopedKeys?: boolean;
  /** Token and cost totals so far. */
  usage?: RunUsageTotals;
  /** Tool calls the run's sub-agents made so far (they count against the run's step limit). */
  subAgentSteps?: number;
  /** A dry run: the source steps whose records already answered a call (each answers one). */
  dryRunAnswered?: number[];
}

/** Status of one tool call. */
export type StepStatus =
  | 'pending'
  | 'awaiting_approval'
  | 'running'
  | 'succeeded'
  | 'failed'
  | 'compensating'
  | 'compensated'
  | 'compensation_failed';

/** One tool call of a run, as the state query shows it. */
export interface StepRecord {
  /** Step number within the run, from 1; part of the idempotency key. */
  stepId: number;
  /** Model turn that proposed the call, from 1. */
  turn: number;
  toolCallId: string;
  tool: string;
  /**
   * The model's arguments, in one shape for every provider: a JSON object when it sent one (as text or as an
   * object); otherwise what it sent (text that is not JSON, ...). A shortened preview when they are large.
   */
  arguments: unknown;
  idempotencyKey: string;
  status: StepStatus;
  observation?: ToolObservation;
  /** Attempts the engine made (known once the step has ended). */
  attempts?: number;
  /** The compensating tool, when the step has one. */
  undo?: string;
  /** The compensation's failure, when it failed. */
  compensationError?: string;
  /** The approval the call waited for, when it needed one: digest, validated arguments, decision. */
  approval?: StepApproval;
  /**
   * The latest progress of a running call (`ctx.progress`), read from its activity's heartbeat details by
   * `getAgentRunState` and `durable-tools run`. The workflow itself never sees heartbeats: absent in the
   * bare `getRunState` query.
   */
  progress?: ToolProgress;
  /**
   * What a running call waits for before its tool runs (a slot of the tool's limits, its breaker's pause), read
   * from its activity's heartbeat details like `progress` (docs/limits.md).
   */
  waiting?: ToolWaiting;
  /** Workflow time (ms since epoch) when the step started and ended. */
  startedAt?: number;
  endedAt?: number;
  /**
   * Set on the steps a forked run took from its source run as recorded: nothing ran for them in this run, and
   * this run never compensates them (docs/fork.md).
   */
  forked?: ForkedStepOrigin;
  /** The sub-agent's workflow id, when the step called an agent tool (set as soon as the child starts). */
  childWorkflowId?: string;
  /** Digest of the validated arguments, once the tool's activity validated them (a dry run matches on it). */
  argumentsDigest?: string;
  /** In a dry run: how the step was answered (from the record, refused, or a read-only tool that ran). */
  dryRun?: DryRunStepAnswer;
  /**
   * Set on a step that is not a tool call but a final answer the run's `output` schema refused: `tool` is
   * `final_answer`, `arguments` the answer as sent, `observation` the `INVALID_ANSWER` the model read. No tool ran.
   */
  finalAnswer?: true;
}

/** Status of a whole run; also the value of the `DurableRunStatus` search attribute. */
export type RunStatus = 'running' | 'completed' | 'failed' | 'compensated' | 'compensation_failed' | 'cancelled';

/** Tokens (and cost) of one model turn. */
export interface TurnUsage {
  /** Model turn, from 1 over the whole run. */
  turn: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens?: number;
  reasoningTokens?: number;
  /** The model that answered, as the provider reported it. */
  modelId?: string;
  /** Cost of the turn, when the run has a cost table with a price for the model. */
  cost?: number;
  /** Set when the turn was a refusal, empty or cut off. */
  issue?: ModelTurnIssue['code'];
}

/** Totals of a run's token usage (all generations). */
export interface RunUsageTotals {
  inputTokens: number;
  outputTokens: number;
  /** Total cost, when the run has a cost table. */
  cost?: number;
  /** Turns whose provider reported no token counts. */
  unreportedTurns: number;
  /** Turns whose model has no price in the cost table. */
  unpricedTurns: number;
}

/** Token usage of a run: totals over all generations, and the last 50 turns of this generation. */
export interface RunUsage extends RunUsageTotals {
  turns: TurnUsage[];
}

/** What the `getRunState` query returns. */
export interface AgentRunState {
  /** The run's workflow id (what `startAgentRun` was given as `workflowId`, or the generated `agent-run-<uuid>`). */
  workflowId: string;
  /**
   * The run's workflow id, under its old name (not Temporal's run id of an execution).
   * @deprecated Use workflowId.
   */
  runId: string;
  /**
   * The run's owner: every key of the run starts with `${runKey}/` (`${workflowId}/${firstExecutionRunId}`;
   * runs started before run-scoped keys: the workflow id). See docs/run-ownership.md.
   */
  runKey?: string;
  goal: string;
  status: RunStatus;
  /** Model turns taken so far (all generations). */
  turns: number;
  /** Tool calls made so far (all generations). */
  stepCount: number;
  /** Continue-as-new generations before this one. */
  generation: number;
  /** Steps of the current generation (earlier generations' steps are in their own histories). */
  steps: StepRecord[];
  /** The model's final answer, once completed. */
  answer?: string;
  /**
   * The typed answer of a run with `output`: the final answer as validated (parsed JSON) by the worker. Present
   * once a run with `output` completed; a run never completes with an answer its schema refused.
   */
  output?: unknown;
  /** A machine-readable code of why the run failed, when the engine has one (e.g. `INVALID_ANSWER`). */
  failureCode?: string;
  /** Why the run stopped, when it did not complete. */
  reason?: string;
  /** The step whose compensation failed, when status is `compensation_failed`. */
  failedCompensationStep?: number;
  /** Catalog problems found at start (e.g. an irreversible tool without approval). */
  policyWarnings: string[];
  /** Token usage and cost of the model turns. */
  usage: RunUsage;
  /** Set when the run was forked from another run: the source and the first step the fork took itself. */
  forkedFrom?: { workflowId: string; fromStep: number };
  /** Set when the run is dry: nothing with effects ran; calls were answered from the source's record. */
  dryRun?: { sourceWorkflowId: string; readOnlyTools: DryRunReadOnlyTools };
  /** True when the model sees the catalog in summary form (names, one-line descriptions, `describe_tools`). */
  toolsDisclosedOnDemand?: boolean;
  /**
   * Oldest steps of this generation left out of this answer to keep it within the payload budget (absent
   * when none was); they are in the workflow's history.
   */
  omittedSteps?: number;
  /** Set when the run is a sub-agent: the parent run and its step that called it. */
  parent?: { workflowId: string; stepId: number };
  /** Tool calls the run's sub-agents made (they count against this run's step limit); absent when none. */
  subAgentSteps?: number;
  /**
   * A completed sub-agent's compensations, oldest first: its parent takes them over (it undoes them if the parent
   * aborts later). Present only in the result of a completed sub-agent that owes any.
   */
  subAgentCompensations?: PendingCompensation[];
  /**
   * Set while the run waits out an outage of its model provider (docs/models.md, "Provider outages"): who, since
   * when, how many attempts, and the last error.
   */
  waitingForModel?: ModelProviderWait;
}

/**
 * What an agent run returns. `O` is the type of the typed answer (`output`) of an agent with an `output` schema
 * (`AgentRunResult<z.infer<typeof schema>>`); `unknown` otherwise.
 */
export type AgentRunResult<O = unknown> = Omit<AgentRunState, 'output'> & { output?: O };
