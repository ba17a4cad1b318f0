/**
 * The JSON shape of one tool as the workflow and the model see it. Pure data: no zod, no functions,
 * so workflow code can import this type without pulling any implementation into its bundle.
 */

import type { ToolBudget } from './tool-budget';
import type { ToolLimitSettings } from './tool-limits';

/** How much a tool changes the world. */
export type ToolEffect = 'read-only' | 'compensable' | 'irreversible';

/**
 * Where a tool call runs: as a regular Temporal activity (the default), or as a local activity inside the
 * workflow task of the worker running the run (`local`, read-only tools only; see docs/tools.md, "Local
 * execution for read-only tools").
 */
export type ToolExecution = 'activity' | 'local';

/**
 * Whether a call of the tool waits for a human decision before it runs: `never`, `always`, or
 * `conditional` (a predicate on the validated arguments decides, on the worker, call by call).
 */
export type ToolApproval = 'never' | 'always' | 'conditional';

/** Backoff shapes the engine supports. */
export type JitterStrategy = 'full' | 'decorrelated';

/** Retry settings of one tool, fully resolved (every field set). */
export interface ToolRetrySettings {
  /** Total attempts, the first one included. Always finite. */
  maximumAttempts: number;
  /** Base delay of the exponential backoff, in milliseconds. */
  initialDelayMs: number;
  /** Upper bound of one backoff delay, in milliseconds. */
  maxDelayMs: number;
  /** Jitter strategy; full jitter unless the tool asks otherwise. */
  jitter: JitterStrategy;
  /** Time budget for all attempts together, in milliseconds. */
  totalDeadlineMs: number;
}

/** One entry of the tool catalog. */
export interface ToolCatalogEntry {
  name: string;
  description: string;
  /** JSON Schema (draft 2020-12) of the arguments. */
  inputSchema: Record<string, unknown>;
  /** JSON Schema (draft 2020-12) of the result. */
  outputSchema: Record<string, unknown>;
  effect: ToolEffect;
  /** True when calling twice with the same idempotency key has the effect of calling once. */
  idempotent: boolean;
  /** Name of the compensating tool, when the tool can be undone. */
  undo?: string;
  /** Whether a call waits for approval (see {@link ToolApproval}); the default follows the effect tier. */
  approval: ToolApproval;
  /** How long a call waits for a decision before it counts as rejected, in milliseconds (default 24 h). */
  approvalTimeoutMs?: number;
  /**
   * True for tools from a source that is not trusted (an MCP server not marked trusted): their hints are
   * not believed, and unless they are read-only they need approval by default.
   */
  untrusted?: boolean;
  retry: ToolRetrySettings;
  /** Start-to-close timeout of one attempt, in milliseconds. */
  timeoutMs: number;
  /**
   * `'untrusted'` for tools whose description and schema come from a third party (an MCP server not
   * marked trusted): the model sees the description fenced as untrusted text. Absent means trusted.
   */
  trust?: ToolTrust;
  /**
   * `'local'` when the tool runs as a local activity; `'activity'` when it declared itself a regular activity,
   * which keeps it one on the fast path too (docs/fast-path.md); absent: a regular activity that may take the
   * fast path.
   */
  execution?: ToolExecution;
  /** Present when the tool declares itself a long call (see docs/long-calls.md). */
  longCall?: ToolLongCallSettings;
  /** Present when the tool submits a job and gets its result later (`defineAsyncJobTool`; docs/long-calls.md). */
  asyncJob?: ToolAsyncJobSettings;
  /**
   * Output and argument budget (see docs/limits.md). Always set by `defineTool`; absent
   * only in catalogs recorded before budgets existed (the defaults apply then).
   */
  budget?: ToolBudget;
  /**
   * Present when the tool is another agent (`defineAgentTool`, docs/sub-agents.md): its activity only validates
   * the arguments and returns the child's run spec; the workflow then runs the child as a child workflow.
   */
  agent?: ToolAgentSettings;
  /**
   * Present when the tool declares per-tool limits across workers (`concurrency`, `rateLimit`) or a shared breaker
   * (docs/limits.md, "Per-tool limits across workers"): its attempts wait for a slot before the tool runs.
   */
  limits?: ToolLimitSettings;
  /** Present when a read-only tool's answers are shared for a while (`defineTool({ cache })`, docs/tools.md). */
  cache?: ToolCacheSettings;
}

/** How long a cached read's answers are reused (see {@link ToolCatalogEntry.cache}). */
export interface ToolCacheSettings {
  ttlMs: number;
}

/** How an agent tool's call runs (see {@link ToolCatalogEntry.agent}). */
export interface ToolAgentSettings {
  /**
   * A handoff: the parent hands the conversation to the child and ends with the child's answer (the child
   * gets the parent's conversation so far with its goal; see docs/sub-agents.md, "Handoffs").
   */
  handoff?: boolean;
}

/** Whether a tool's description may be shown to the model as instructions or only as fenced data. */
export type ToolTrust = 'trusted' | 'untrusted';

/** What a cancellation (of the run, or of the call) means to a long call. */
export type LongCallCancellation = 'abort' | 'finish-unit';

/** The resolved long-call settings, as the catalog carries them. */
export interface ToolLongCallSettings {
  heartbeatTimeoutMs: number;
  deadlineMs: number;
  onCancel: LongCallCancellation;
  maxCheckpointBytes: number;
  /** Present only when the tool declares `resultRetention`. */
  resultRetentionMs?: number;
}

/** How an async job's result reaches the call: the downstream calls back, or the worker polls it. */
export type AsyncJobCompletion = 'callback' | 'poll';

/** The resolved async-job settings, as the catalog carries them. */
export interface ToolAsyncJobSettings {
  completion: AsyncJobCompletion;
  deadlineMs: number;
  pollIntervalMs: number;
  maxPollIntervalMs: number;
  fetchLater: boolean;
}
