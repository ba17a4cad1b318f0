import { combinedSignal } from './combined-signal';
import { cachedRead } from './cached-read';
import { redactFailure, redactingLogger } from './redact-sensitive';
import type { StreamStore } from '../stores/streams/stream-store';
import { publishProgress } from './progress-stream';
import { parsedArguments, sensitiveValues } from '../contract/sensitive-arguments';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import {
  boundToolOutput,
  ClaimCheckMissingError,
  resolveCompensationArguments,
  storeCallArguments,
  type PayloadStore,
} from '../stores/transcripts/claim-check';
import { READ_STORED_OUTPUT_TOOL } from '../contract/claim-check-reference';
import type { IdempotencyStore } from '../stores/idempotency/idempotency-store';
import { isLeaseLostError } from '../stores/idempotency/idempotency-store-error';
import type { Tool } from '../tools/define-tool';
import { type ArgumentGuardLimits, nestsDeeperThan, OUTPUT_MAX_DEPTH } from '../guard/json-arguments';
import { resolveArgumentGuard, toolArgumentGuard, type ArgumentGuardOptions } from '../guard/argument-guard-options';
import { parseToolArguments } from '../guard/parse-tool-arguments';
import { RetryBudget } from '../failures/retry-budget';
import type { ToolCatalogEntry, ToolRetrySettings } from '../contract/tool-catalog-entry';
import type { ToolContext } from '../tools/tool-context';
import type { ToolRegistry } from '../tools/tool-registry';
import { budgetOf } from '../contract/tool-budget';
import { MemoryTranscriptStore } from '../stores/transcripts/memory-transcript-store';
import type { FusedAttemptFailure, ToolActivityInput, ToolActivityResult } from '../contract/tool-activity-types';
import { assertApprovedArguments } from './approved-arguments';
import { assertRecordedApproval } from './recorded-approval';
import { RunAuthority } from './run-authority';
import { asRunGrantStore, type RunGrantStore } from '../stores/audit/run-grant-store';
import type { AuditStore } from '../stores/audit/audit-store';
import { MemoryAuditStore } from '../stores/audit/memory-audit-store';
import type { ToolLimitStore } from '../stores/limits/tool-limit-store';
import { MemoryToolLimitStore } from '../stores/limits/memory-tool-limit-store';
import { TOOL_LIMIT_DEFAULTS } from '../contract/tool-limits';
import { acquireSlot, limitKeyOfCall, releasingSlot, type HeldSlot } from './tool-call-limits';
import { dryRunDecision, forcedDry, validatedDigest, withArgumentsDigest } from './dry-run-call';
import { DRY_RUN_ACTIVITY_PREFIX, dryRunActivityType } from '../contract/dry-run-types';
import {
  claimKey,
  DEAD_HOLDER_DRAIN_MS,
  IN_FLIGHT_RETRY,
  storedFailureOf,
  type DeadHolderTakeover,
} from './tool-call-idempotency';
import { DeathWitness } from './death-witness';
import { thisProcessHolder } from './holder-identity';
import { forgetDeadStickyWorker } from './dead-worker-sticky';
import { TOOL_CALL_LEASE, ToolCallLease } from './tool-call-lease';
import { AttemptRequestGuard, installRequestLeaseGuard } from './request-lease-guard';
import { CallHeartbeat, lastCheckpoint, saveCheckpoint, type CallHeartbeatDetails } from './call-heartbeat';
import { DEFAULT_MAX_CHECKPOINT_BYTES } from '../tools/long-call';
import { checkpointRetention, outputRetention, storeKeepingResults } from './long-call-retention';
import { deterministicStoreFailure, type StorePhase } from './store-failure';
import { cancelledCall, failureForThrownError } from './tool-error-handling';
import { bindAsyncJob, isAsyncCompletion } from './async-job-call';
import type { MeterProvider } from '@opentelemetry/api';
import { createEngineMetrics, type EngineMetrics } from '../telemetry/engine-metrics';
import { ToolCallRecord } from '../telemetry/tool-call-telemetry';
import {
  TEMPORAL_FAILURE_TYPES,
  TOOL_ERROR_CODES,
  toolFailure,
  type ToolErrorObservation,
} from '../contract/activity-protocol';

export { TOOL_CALL_LEASE } from './tool-call-lease';

/** Retry settings of a compensation: retried until it succeeds or fails permanently. */
const COMPENSATION_RETRY_OVERRIDES = {
  maximumAttempts: Number.MAX_SAFE_INTEGER,
  totalDeadlineMs: Number.POSITIVE_INFINITY,
} as const;

/** Dependencies of {@link createToolActivities}. */
export interface ToolActivityDeps {
  registry: ToolRegistry;
  /**
   * Durable idempotency keys. With a store, a call with effects runs at most once per key across retries,
   * worker crashes and several workers; without one, each attempt may run the tool again.
   */
  idempotencyStore?: IdempotencyStore;
  /** Lease of a key while a call runs (default 30 s); renewed every third of it while the tool runs. */
  leaseMs?: number;
  /**
   * Takeover grace (default: the tool's attempt timeout): after a holder's lease ran out, its key stays in
   * flight this much longer, so a request it sent just before its deadline lands downstream before the next
   * attempt reconciles. See docs/exactly-once.md.
   */
  takeoverGraceMs?: number;
  /**
   * Dead-holder takeover (default 1 s, `DEAD_HOLDER_DRAIN_MS`): a key held by a process of this machine and pid
   * namespace that no longer exists (killed, crashed; a paused one still exists) is taken over at once instead of
   * after its lease and takeover grace, and the new owner waits this drain before it reconciles or re-runs,
   * counted from the first moment this process knew the holder dead: the activities list `/proc` when they are
   * made, so a holder already gone then (the worker a restarted one replaces) has been draining since.
   * `false`: always wait for the lease and the grace (a tool that hands its effect to another process that may
   * outlive the worker, e.g. a child process, and settles it by `reconcile`). See docs/exactly-once.md.
   */
  deadHolderDrainMs?: number | false;
  /**
   * Monotonic clock of the lease deadline and of the dead-holder drain, in ms (default `performance.now`). Tests
   * inject one.
   */
  leaseClock?: () => number;
  /** Retry budget of this worker process (default: one per set of activities, 10% of calls once empty). */
  retryBudget?: RetryBudget;
  /** Uniform random source for jitter (tests inject a seeded one). */
  random?: () => number;
  /**
   * Where outputs above a tool's budget (and large arguments of compensable calls) are stored as claim
   * checks: the worker's transcript store (default: a memory store of this process; share it with the
   * model activities and `read_stored_output`, as `createWorker` does).
   */
  payloadStore?: PayloadStore;
  /**
   * Limits of the argument guard for this worker's tools (nesting depth, problems listed, characters per
   * problem); a tool's own `argumentGuard` overrides them. Checked at once: an unknown limit or a value out
   * of range throws {@link ArgumentGuardConfigError}. Defaults: `ARGUMENT_GUARD_LIMITS`.
   */
  argumentGuard?: ArgumentGuardOptions;
  /**
   * Where the engine's metrics go (default: the global OpenTelemetry meter provider, a no-op until an SDK
   * registers one). See docs/telemetry.md.
   */
  meterProvider?: MeterProvider;
  /**
   * Where progress reports of running calls (`ctx.progress`) are also streamed live to readers (docs/streaming.md),
   * besides the heartbeat. Best effort: a failing store never fails a call.
   */
  streams?: StreamStore;
  /**
   * The audit trail the engine's approval activities write (`createApprovalActivities({ auditStore })`; give both the
   * same store, as `createWorker` does). A call of a tool that requires approval for its validated arguments runs only
   * when this store holds an approving decision for the call's idempotency key, tool and argument digest; otherwise
   * it fails with `APPROVAL_REQUIRED` and nothing runs, whoever scheduled it. Tools without a requirement never read
   * it. Default: a memory store of this process that no gate writes to, so every gated call is refused.
   */
  auditStore?: AuditStore;
  /**
   * Whether a run's waiver of a tool's approval (recorded by `evaluateApproval` as a `'waived'` decision) lets the call
   * run: the same setting as the approval activities' `allowRunsToWaive` (default false).
   */
  allowRunsToWaive?: boolean;
  /**
   * Where trusted starters (the MCP server, `startAgentRun({ grant })`) recorded the tools each run may call, and where
   * the activity of an agent tool records its child's (docs/security.md, "Authority of a run"). A run with a grant
   * calls only the tools it names, whoever scheduled the call; otherwise the call fails with `TOOL_NOT_PERMITTED` and
   * nothing runs. Default: the audit store, when it is one of the engine's (they keep grants in a table of their own).
   */
  grants?: RunGrantStore;
  /**
   * Tools that need a grant: a run without one (a workflow of one's own, a hand-made activity call, a run started
   * without a grant) never calls them (`TOOL_NOT_PERMITTED`). Default none. The `durable-tools mcp` command restricts
   * every tool behind a per-tool OAuth scope (`--oauth-tool-scope`).
   */
  restrictedTools?: Iterable<string>;
  /**
   * Where the slots, rate windows and breakers of tools with limits (`defineTool({ concurrency, rateLimit, breaker })`)
   * live: share one store between every worker of the task queue (`createToolLimitStore()`: SQLite next to the
   * idempotency keys on one machine). Default: a memory store of this process (the limits hold per worker only).
   */
  limitStore?: ToolLimitStore;
  /** Lease of a held slot (default 30 s): the slot of a worker that died is free again after this. */
  slotLeaseMs?: number;
}

/** An activity implementing one tool call. */
export type ToolActivity = (input: ToolActivityInput) => Promise<ToolActivityResult>;

/** The activities a worker registers for its tools: one per tool, named after it, plus `describeTools`. */
export interface ToolActivities {
  /** Returns the JSON catalog (all tools, or the named ones). Recorded in history, so replay is stable. */
  describeTools(names?: readonly string[]): Promise<ToolCatalogEntry[]>;
  [toolName: string]: ToolActivity | ((names?: readonly string[]) => Promise<ToolCatalogEntry[]>);
}

type ResolvedDeps = ToolActivityDeps & {
  retryBudget: RetryBudget;
  leaseMs: number;
  owner: string;
  deadHolder: DeadHolderTakeover | undefined;
  payloadStore: PayloadStore;
  guard: ArgumentGuardLimits;
  metrics: EngineMetrics;
  auditStore: AuditStore;
  authority: RunAuthority;
  limitStore: ToolLimitStore;
};

/**
 * Builds the activities of a tool registry. Each tool becomes an activity whose type is the tool's
 * name. The wrapper validates arguments (the implementation never runs on bad input), claims the call's
 * idempotency key (tools with effects, when a store is given), runs the tool with a {@link ToolContext}
 * while renewing the key's lease, validates the output, records the outcome, and turns every failure
 * into a structured error with an engine-chosen retry delay.
 *
 * @example
 * ```ts
 * const worker = await Worker.create({
 *   activities: {
 *     ...createToolActivities({ registry, idempotencyStore: new SqliteIdempotencyStore() }),
 *     ...createModelActivities({ registry }),
 *   },
 *   ...
 * });
 * ```
 */
export function createToolActivities(deps: ToolActivityDeps): ToolActivities {
  // Every HTTP request a tool makes is checked against its attempt's lease (docs/exactly-once.md).
  installRequestLeaseGuard();
  const activities: ToolActivities = {
    describeTools: async (names?: readonly string[]) => {
      await deps.registry.refresh?.();
      return deps.registry.catalog(names);
    },
  };
  const auditStore = deps.auditStore ?? new MemoryAuditStore();
  const resolved: ResolvedDeps = {
    ...deps,
    retryBudget: deps.retryBudget ?? new RetryBudget(),
    leaseMs: deps.leaseMs ?? TOOL_CALL_LEASE.leaseMs,
    ...holderSettings(deps.deadHolderDrainMs, deps.leaseClock),
    payloadStore: deps.payloadStore ?? new MemoryTranscriptStore(),
    guard: resolveArgumentGuard(deps.argumentGuard),
    metrics: createEngineMetrics(deps.meterProvider),
    auditStore,
    authority: new RunAuthority({
      registry: deps.registry,
      grants: deps.grants ?? asRunGrantStore(auditStore),
      restrictedTools: new Set(deps.restrictedTools ?? []),
    }),
    limitStore: deps.limitStore ?? new MemoryToolLimitStore(),
  };
  for (const tool of deps.registry.list()) {
    const bound = bindAsyncJob(tool, resolved.payloadStore);
    activities[tool.contract.name] = (input: ToolActivityInput) => runToolCall(bound, input, resolved);
    // A dry run's calls have their own activity type, which is dry whatever its input says (dry-run-call.ts).
    activities[dryRunActivityType(tool.contract.name)] = (input: ToolActivityInput) =>
      runToolCall(bound, forcedDry(input), resolved);
  }
  if (deps.registry.refresh) {
    // Temporal's fallback activity: tools that appeared after the worker was created (an MCP server's
    // `list_changed`) run through the same wrapper, found by the activity type.
    activities.default = (input: ToolActivityInput) => runLateTool(input, resolved);
  }
  return activities;
}

/** This process's owner label (with its holder identity on Linux) and the dead-holder takeover. */
function holderSettings(
  drainMs: number | false | undefined,
  clock: (() => number) | undefined,
): Pick<ResolvedDeps, 'owner' | 'deadHolder'> {
  if (drainMs !== undefined && drainMs !== false && !(Number.isFinite(drainMs) && drainMs >= 0)) {
    throw new TypeError('deadHolderDrainMs must be a non-negative number of milliseconds or false.');
  }
  const { identity, owner } = thisProcessHolder();
  if (identity === undefined || drainMs === false) return { owner, deadHolder: undefined };
  // Lists /proc now (the worker's start): a holder already gone then has been draining since (death-witness.ts).
  const witness = new DeathWitness(identity, undefined, clock);
  const drain = drainMs ?? DEAD_HOLDER_DRAIN_MS;
  return {
    owner,
    deadHolder: {
      isDead: (holder) => witness.isDead(holder),
      drainMs: drain,
      drainLeftMs: (holder) => witness.drainLeftMs(holder, drain),
      // The dead process was most likely the run's sticky worker too: the next workflow task need not wait for it.
      onTakeover: forgetDeadStickyWorker,
    },
  };
}

async function runLateTool(input: ToolActivityInput, deps: ResolvedDeps): Promise<ToolActivityResult> {
  const type = Context.current().info.activityType;
  const dry = type.startsWith(DRY_RUN_ACTIVITY_PREFIX);
  const activityType = dry ? type.slice(DRY_RUN_ACTIVITY_PREFIX.length) : type;
  let tool = deps.registry.get(activityType);
  if (!tool) {
    await deps.registry.refresh?.();
    tool = deps.registry.get(activityType);
  }
  if (!tool) {
    throw ApplicationFailure.create({
      type: TEMPORAL_FAILURE_TYPES.ACTIVITY_NOT_REGISTERED,
      nonRetryable: true,
      message: `Tool "${activityType}" is not known to this worker (not registered, and no MCP server lists it now).`,
    });
  }
  return runToolCall(tool, dry ? forcedDry(input) : input, deps);
}

/** One attempt of a tool call, with its telemetry (span attributes and metrics). */
async function runToolCall(tool: Tool, input: ToolActivityInput, deps: ResolvedDeps): Promise<ToolActivityResult> {
  // The first attempt ran inside the turn's fused step and failed (its metrics and audit are recorded there): this
  // attempt ends with its failure, and the call's retry policy goes on from it (docs/fast-path.md, "Attempts").
  const fused = input?.fusedAttemptFailure;
  if (fused && Context.current().info.attempt === 1) throw fusedAttemptFailure(fused);
  const record = new ToolCallRecord(deps.metrics, {
    tool: tool.contract.name,
    idempotencyKey: typeof input?.idempotencyKey === 'string' ? input.idempotencyKey : '',
    stepId: typeof input?.stepId === 'number' ? input.stepId : 0,
    attempt: Context.current().info.attempt,
    ...(typeof input?.compensationOf === 'string' ? { compensationOf: input.compensationOf } : {}),
  });
  try {
    const result = await executeToolCall(tool, input, deps, record);
    record.succeeded(result.replayed === true);
    return result;
  } catch (error) {
    if (!isAsyncCompletion(error)) record.failed(error);
    throw error;
  }
}

async function executeToolCall(
  tool: Tool,
  input: ToolActivityInput,
  deps: ResolvedDeps,
  record: ToolCallRecord,
): Promise<ToolActivityResult> {
  const activity = Context.current();
  const { attempt, workflowExecution, heartbeatDetails } = activity.info;
  const entry = tool.contract.catalogEntry;
  if (!input || typeof input !== 'object' || typeof input.idempotencyKey !== 'string') {
    throw ApplicationFailure.create({
      type: TOOL_ERROR_CODES.INTERNAL,
      nonRetryable: true,
      message: `Tool activity "${entry.name}" was called without a ToolActivityInput ({ arguments, idempotencyKey, stepId }).`,
    });
  }
  const compensating = typeof input.compensationOf === 'string';
  const retry: ToolRetrySettings = compensating ? { ...entry.retry, ...COMPENSATION_RETRY_OVERRIDES } : entry.retry;

  // Whoever scheduled the call: a run calls only the tools of its authority (run-authority.ts).
  const authorityCall = { tool, input, workflowId: workflowExecution?.workflowId ?? '', attempt, retry };
  await deps.authority.assertPermitted(authorityCall);
  const workflowId = workflowExecution?.workflowId ?? input.idempotencyKey.split('/')[0] ?? '';
  // The owner of the call's stored data: the run (workflow id and first run id), never just the workflow id.
  const runKey = typeof input.runKey === 'string' && input.runKey.length > 0 ? input.runKey : workflowId;
  const rawArguments = compensating
    ? await resolveCompensationArguments(input.arguments, deps.payloadStore, runKey).catch((error: unknown) => {
        throw payloadFailure(entry, retry, attempt, error);
      })
    : input.arguments;
  // Arguments sent as JSON text are parsed once, for the secrets and the guard alike. Text that is not JSON,
  // or the JSON of a mere string, goes on as it was sent (the guard explains the problem to the model).
  const sent = parsedArguments(rawArguments);
  const value = sent.ok && typeof sent.value !== 'string' ? sent.value : rawArguments;
  // Values of fields the schema marks sensitive: kept out of error messages, details and logs.
  const secrets = sensitiveValues(value, entry.inputSchema);
  const limits = toolArgumentGuard(deps.guard, tool.contract.spec.argumentGuard);
  const parsed = parseToolArguments(tool.contract.spec.input, value, limits);
  // Refused in this attempt: its observation counts it, as the attempt's span does (one attempt count).
  if (!parsed.ok) {
    throw redactFailure(toolFailure({ ...parsed.error, attempts: attempt }, { mayHaveHadEffect: false }), secrets);
  }
  if (input.approvedDigest !== undefined) {
    assertApprovedArguments(entry.name, parsed.value, input.approvedDigest, attempt);
  }
  const digest = validatedDigest(parsed.value);
  // A dry run: a call with effects never reaches the tool's code, whatever the workflow asked (dry-run-call.ts).
  const dry = dryRunDecision(entry, input, digest);
  if (dry.kind === 'recorded') {
    return { output: null, attempt, argumentsDigest: digest!, dryRunAnswer: { sourceStep: dry.sourceStep } };
  }
  // Whoever scheduled the call: a gated tool runs only on the decision the engine recorded (recorded-approval.ts).
  await assertRecordedApproval(
    { tool, input, validated: parsed.value, digest, attempt, retry },
    { registry: deps.registry, auditStore: deps.auditStore, allowRunsToWaive: deps.allowRunsToWaive === true },
  ).catch((error: unknown) => {
    throw redactFailure(withArgumentsDigest(error, digest), secrets);
  });
  if (input.storeArguments && !compensating) {
    await storeCallArguments(input.arguments, deps.payloadStore, input.idempotencyKey, runKey).catch(
      (error: unknown) => {
        throw payloadFailure(entry, retry, attempt, error);
      },
    );
  }

  // A local activity (a read-only tool declared `execution: 'local'`) cannot heartbeat; its attempt number
  // is exact, since every attempt runs inside the workflow task of the worker that owns the run.
  const local = activity.info.isLocal;
  const previous = heartbeatDetails as CallHeartbeatDetails | undefined;
  const executions = local ? attempt : (previous?.executions ?? 0) + 1;
  const resumeFrom =
    attempt > 1
      ? await lastCheckpoint(previous?.checkpoint, deps.payloadStore, input.idempotencyKey, runKey, activity.log)
      : undefined;
  // Every heartbeat (the lease's, the tool's, a checkpoint, a progress report) carries all the details.
  const heartbeat = new CallHeartbeat(local ? undefined : (details) => activity.heartbeat(details), {
    executions,
    stepId: input.stepId,
    ...(resumeFrom ? { checkpoint: resumeFrom } : {}),
  });
  const lease = new ToolCallLease({
    key: input.idempotencyKey,
    leaseMs: deps.leaseMs,
    heartbeat: () => heartbeat.beat(),
    log: activity.log,
    ...(activity.info.heartbeatTimeoutMs ? { heartbeatTimeoutMs: activity.info.heartbeatTimeoutMs } : {}),
    ...(deps.leaseClock ? { now: deps.leaseClock } : {}),
  });
  const ctx = toolContext(tool, input, {
    workflowId,
    runKey,
    attempt,
    lease,
    heartbeat,
    deps,
    resumeFrom: resumeFrom?.state,
  });
  ctx.log = redactingLogger(ctx.log, secrets);
  let slot: HeldSlot | undefined;
  try {
    // A cached read's answer is shared from the idempotency store (cached-read.ts); never in a dry run. A cached
    // answer takes no slot: the tool does not run.
    const cache = { store: deps.idempotencyStore, owner: deps.owner, skip: compensating || input.dryRun !== undefined };
    const result = await cachedRead(tool, parsed.value, cache, async () => {
      slot = await waitForLimits(tool, parsed.value, { input, attempt, executions, heartbeat, deps });
      return claimAndRun(slot ? releasingSlot(tool, slot) : tool, parsed.value, ctx, lease, {
        retry,
        compensating,
        executions,
        deps,
        sent: parsed.sent,
        heartbeat,
        record,
      });
    });
    // An agent tool's output is its child's spec: the child's grant is recorded before the workflow starts it.
    const child =
      entry.agent && input.dryRun === undefined
        ? await deps.authority.grantChild(authorityCall, result.output)
        : undefined;
    const granted = child ? { ...result, childGrant: child.tools } : result;
    return digest === undefined ? granted : { ...granted, argumentsDigest: digest };
  } catch (error) {
    throw redactFailure(withArgumentsDigest(error, digest), secrets);
  } finally {
    lease.stop();
    // A slot whose tool never ran (a replayed key, a call in flight elsewhere) is freed without a verdict.
    await slot?.release({ kind: 'other' });
  }
}

/**
 * The call's slot under its tool's limits, held (undefined for a tool without limits). The attempt waits only
 * within what its start-to-close timeout grants beyond the tool's own timeout, so the tool keeps all of it.
 */
async function waitForLimits(
  tool: Tool,
  args: unknown,
  call: { input: ToolActivityInput; attempt: number; executions: number; heartbeat: CallHeartbeat; deps: ResolvedDeps },
): Promise<HeldSlot | undefined> {
  const limits = tool.contract.catalogEntry.limits;
  if (!limits) return undefined;
  const activity = Context.current();
  const { info } = activity;
  const budget = info.isLocal ? 0 : (info.startToCloseTimeoutMs ?? 0) - tool.contract.catalogEntry.timeoutMs;
  return acquireSlot(
    {
      tool: tool.contract.name,
      limits,
      key: limitKeyOfCall(tool, args, call.attempt),
      callId: call.input.idempotencyKey,
      holder: `${call.deps.owner}/attempt-${call.attempt}/${call.input.idempotencyKey}`,
      waitBudgetMs: Math.max(0, Math.min(budget, limits.slotWaitMs)),
      heartbeat: call.heartbeat,
      executionsBefore: call.executions - 1,
      attempt: call.attempt,
      cancellation: activity.cancellationSignal,
    },
    {
      store: call.deps.limitStore,
      leaseMs: call.deps.slotLeaseMs ?? TOOL_LIMIT_DEFAULTS.slotLeaseMs,
      metrics: call.deps.metrics,
      log: activity.log,
    },
  );
}

/** What {@link toolContext} builds the context from. */
interface ContextParts {
  workflowId: string;
  runKey: string;
  attempt: number;
  lease: ToolCallLease;
  heartbeat: CallHeartbeat;
  deps: ResolvedDeps;
  resumeFrom: unknown;
}

/**
 * The context a tool runs with. A `longCall.onCancel: 'finish-unit'` tool's `signal` does not abort on
 * cancellation: its next checkpoint saves and then ends the call.
 */
function toolContext(tool: Tool, input: ToolActivityInput, parts: ContextParts): ToolContext {
  const activity = Context.current();
  const { lease, heartbeat, deps } = parts;
  const longCall = tool.contract.catalogEntry.longCall;
  const cancellation = activity.cancellationSignal;
  const finishUnit = longCall?.onCancel === 'finish-unit';
  const target = {
    heartbeat,
    store: deps.payloadStore,
    idempotencyKey: input.idempotencyKey,
    runId: parts.runKey,
    maxBytes: longCall?.maxCheckpointBytes ?? DEFAULT_MAX_CHECKPOINT_BYTES,
    log: activity.log,
    ...checkpointRetention(longCall),
  };
  return {
    idempotencyKey: input.idempotencyKey,
    stepId: input.stepId,
    workflowId: parts.workflowId,
    runId: parts.workflowId,
    runKey: parts.runKey,
    attempt: parts.attempt,
    // Not AbortSignal.any: a tool's listener that stays would keep the call in memory (combined-signal.ts).
    signal: finishUnit ? lease.signal : combinedSignal([cancellation, lease.signal]).signal,
    cancellation,
    assertLease: () => lease.assert(),
    get fencingToken() {
      return lease.fencingToken;
    },
    heartbeat: (details?: unknown) => {
      if (details !== undefined) heartbeat.setTool(details);
      heartbeat.beat();
    },
    ...(parts.resumeFrom !== undefined ? { resumeFrom: parts.resumeFrom } : {}),
    checkpoint: async (state: unknown) => {
      await saveCheckpoint(target, state);
      // The unit is finished and saved: a cancellation that came meanwhile ends the call here.
      if (finishUnit && cancellation.aborted) throw cancellation.reason;
    },
    progress: (percent: number, message?: string) => {
      heartbeat.setProgress(percent, message, new Date());
      heartbeat.beat();
      if (deps.streams)
        publishProgress(
          deps.streams,
          parts.runKey,
          input.stepId,
          tool.contract.catalogEntry.name,
          heartbeat.progress,
          activity,
        );
    },
    log: activity.log,
  };
}

interface CallSettings {
  retry: ToolRetrySettings;
  compensating: boolean;
  /** Attempts that ran (or are about to run) the tool, this one included. */
  executions: number;
  deps: ResolvedDeps;
  /** The arguments as the model sent them (parsed JSON), for the key's fingerprint. */
  sent: unknown;
  heartbeat: CallHeartbeat;
  /** The attempt's telemetry. */
  record: ToolCallRecord;
}

async function claimAndRun(
  tool: Tool,
  args: unknown,
  ctx: ToolContext,
  lease: ToolCallLease,
  call: CallSettings,
): Promise<ToolActivityResult> {
  const { retry, compensating, deps } = call;
  const activity = Context.current();
  const { attempt, scheduledTimestampMs, heartbeatDetails } = activity.info;
  const entry = tool.contract.catalogEntry;
  const store = entry.effect === 'read-only' ? undefined : storeKeepingResults(deps.idempotencyStore, entry.longCall);
  let token: string | undefined;
  if (store) {
    // The key's fingerprint is what the model sent, not the validated input with defaults filled in.
    const decision = await claimKey(store, tool, call.sent, ctx, {
      owner: `${deps.owner}/attempt-${attempt}`,
      leaseMs: deps.leaseMs,
      // A long call's single requests are bounded by its heartbeat timeout, not by its hours-long attempt.
      takeoverGraceMs: deps.takeoverGraceMs ?? entry.longCall?.heartbeatTimeoutMs ?? entry.timeoutMs,
      maximumAttempts: compensating
        ? Number.POSITIVE_INFINITY
        : activity.info.retryPolicy?.maximumAttempts || retry.maximumAttempts,
      lease,
      onReconcile: (result) => call.record.reconciled(result),
      ...(deps.deadHolder ? { deadHolder: deps.deadHolder } : {}),
    }).catch((error: unknown) => {
      if (error instanceof ApplicationFailure) throw error;
      throw storeUnavailable(entry, retry, attempt, error, 'claim');
    });
    if (decision.kind === 'replay') {
      // A stored result is already bounded; an output adopted from `reconcile` may not be yet.
      const replayed = await boundOutput(tool, decision.output, ctx, deps).catch((error: unknown) => {
        throw storeUnavailable(entry, retry, attempt, error, 'record');
      });
      return { output: replayed, attempt, replayed: true };
    }
    token = decision.token;
  }

  if (!compensating && call.executions > retry.maximumAttempts) {
    // Every attempt the tool allows already ran and the last one never reported back (timed out).
    throw await attemptsSpent(entry, call.executions - 1, store, ctx.idempotencyKey, token);
  }
  if (attempt === 1 && !compensating) deps.retryBudget.recordFirstAttempt(entry.name);
  lease.start();
  // Checks every HTTP request of the tool, whatever client it uses, just before it leaves the process.
  const requestGuard = new AttemptRequestGuard(lease);
  let rawOutput: unknown;
  try {
    lease.assert();
    rawOutput = await requestGuard.run(() => tool.execute(args, ctx));
    // A request was refused: whatever the tool made of that (a caught error, a fallback result), the
    // attempt lost its key and must not record an outcome; the next owner finds out what happened.
    if (requestGuard.refused) throw requestGuard.refused;
  } catch (error) {
    requestGuard.end();
    lease.stop();
    // An async-job tool recorded its job and waits for a callback: the key stays held, the call stays open.
    if (isAsyncCompletion(error)) throw error;
    if (activity.cancellationSignal.aborted)
      throw cancelledCall(entry.name, attempt, error, activity.cancellationSignal.reason);
    // The lease is gone: another attempt owns (or will own) the key and finds out what happened. Keep it.
    if (lease.lost) throw leaseLost(entry, attempt, lease.lost);
    if (requestGuard.refused) throw leaseLost(entry, attempt, requestGuard.refused);
    const previousDelayMs = (heartbeatDetails as CallHeartbeatDetails | undefined)?.retryDelayMs;
    const { failure, retryDelayMs, classification, refusedBy } = failureForThrownError(error, {
      tool: { ...entry, retry },
      attempt: call.executions,
      elapsedMs: Date.now() - scheduledTimestampMs,
      ...(compensating ? {} : { budget: deps.retryBudget }),
      ...(previousDelayMs !== undefined ? { previousDelayMs } : {}),
      ...(deps.random ? { random: deps.random } : {}),
    });
    if (classification) call.record.classified(classification, refusedBy);
    if (store && token) {
      // A transient failure is forgotten so the next attempt starts fresh; a final one is kept for replay.
      if (retryDelayMs !== undefined) await store.release(ctx.idempotencyKey, token).catch(() => false);
      else await recordFinalFailure(store, ctx.idempotencyKey, token, failure);
    }
    if (retryDelayMs !== undefined) call.heartbeat.retry(retryDelayMs, call.executions);
    throw failure;
  }
  requestGuard.end();
  lease.stop();
  return finishCall(tool, rawOutput, ctx, { store, token, attempt, retry }, deps);
}

async function finishCall(
  tool: Tool,
  rawOutput: unknown,
  ctx: ToolContext,
  held: { store: IdempotencyStore | undefined; token: string | undefined; attempt: number; retry: ToolRetrySettings },
  deps: ResolvedDeps,
): Promise<ToolActivityResult> {
  const { store, token, attempt, retry } = held;
  const entry = tool.contract.catalogEntry;
  const output = tool.contract.spec.output.safeParse(rawOutput);
  const outputProblem = output.success ? undefined : output.error.issues;
  if (outputProblem || nestsDeeperThan(output.data, OUTPUT_MAX_DEPTH)) {
    const observation = invalidOutput(entry.name, attempt, outputProblem, deps.guard.maxIssues);
    const facts = { mayHaveHadEffect: true };
    if (store && token)
      await store.fail(ctx.idempotencyKey, token, storedFailureOf(observation, facts)).catch(() => {});
    throw toolFailure(observation, facts);
  }
  let result: unknown;
  try {
    // Above the tool's budget the output is stored and the model (and the key store) get a claim check.
    result = await boundOutput(tool, output.data, ctx, deps);
  } catch (error) {
    // Like a failed `complete`: the effect happened but is not recorded; never a blind repeat.
    throw storeUnavailable(entry, retry, attempt, error, 'record');
  }
  if (store && token) {
    try {
      // Even after the local deadline passed, the result is recorded while nobody has taken the key over.
      // Durable with the store's next synced commit (docs/exactly-once.md): lost only in an operating-system
      // crash before it, the key is in flight again and a later attempt reconciles, never runs blindly.
      await store.complete(ctx.idempotencyKey, token, result, { durableWithNextCommit: true });
    } catch (error) {
      if (isLeaseLostError(error)) throw leaseLost(entry, attempt, error as Error);
      // The effect happened but is not recorded: the next attempt finds the key in flight, then unknown,
      // and reconciles (or re-runs an idempotent tool, or stops with OUTCOME_UNKNOWN). Never a blind repeat.
      const deterministic = deterministicStoreFailure(entry.name, 'record', attempt, error);
      if (!deterministic) throw storeUnavailable(entry, retry, attempt, error, 'record');
      // The result itself cannot be stored (not JSON): record why, so no later attempt runs the tool again.
      const failure = toolFailure(deterministic.observation, deterministic.facts);
      await recordFinalFailure(store, ctx.idempotencyKey, token, failure);
      throw failure;
    }
  }
  return { output: result, attempt };
}

/** The final failure when every attempt the tool allows ran and the last one timed out. */
async function attemptsSpent(
  entry: ToolCatalogEntry,
  ran: number,
  store: IdempotencyStore | undefined,
  key: string,
  token: string | undefined,
): Promise<ApplicationFailure> {
  const observation: ToolErrorObservation = {
    status: 'error',
    code: TOOL_ERROR_CODES.TIMEOUT,
    message: `Tool "${entry.name}" did not finish in time (gave up after ${ran} attempt${ran === 1 ? '' : 's'}).`,
    hint: 'The tool may be overloaded; try later, with a smaller request, or use another tool.',
    retryable: false,
    attempts: ran,
  };
  const facts = { mayHaveHadEffect: true };
  if (store && token) await store.fail(key, token, storedFailureOf(observation, facts)).catch(() => {});
  return toolFailure(observation, facts);
}

/**
 * The failure of an attempt that lost its lease: retryable, and the key is left as it is, so the next
 * attempt waits for the new owner or, after the takeover grace, reconciles what this one may have done.
 */
function leaseLost(entry: ToolCatalogEntry, attempt: number, cause: Error): ApplicationFailure {
  return toolFailure(
    {
      status: 'error',
      code: TOOL_ERROR_CODES.LEASE_LOST,
      message: `The attempt of "${entry.name}" stopped: ${cause.message}`,
      hint: 'The engine checks what happened before anything runs again; do not repeat the action yourself.',
      retryable: true,
      attempts: attempt,
    },
    { mayHaveHadEffect: true },
    IN_FLIGHT_RETRY.minDelayMs,
  );
}

async function recordFinalFailure(
  store: IdempotencyStore,
  key: string,
  token: string,
  failure: ApplicationFailure,
): Promise<void> {
  const [observation, facts] = (failure.details ?? []) as [ToolErrorObservation?, { mayHaveHadEffect: boolean }?];
  if (!observation) {
    // A tool's own ApplicationFailure: nothing structured to replay; let the next attempt decide afresh.
    await store.release(key, token).catch(() => false);
    return;
  }
  await store.fail(key, token, storedFailureOf(observation, facts ?? { mayHaveHadEffect: true })).catch(() => {});
}

/** The observation of a result that breaks the tool's own output schema (issues) or nests too deep (none). */
function invalidOutput(
  tool: string,
  attempt: number,
  issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> | undefined,
  maxIssues: number,
): ToolErrorObservation {
  const listed = (issues ?? []).slice(0, maxIssues);
  return {
    status: 'error',
    code: TOOL_ERROR_CODES.INVALID_OUTPUT,
    message: issues
      ? `Tool "${tool}" returned a result that does not match its output schema (${issues.length} problem${issues.length === 1 ? '' : 's'}).`
      : `Tool "${tool}" returned a result nested deeper than ${OUTPUT_MAX_DEPTH} levels.`,
    hint: 'This is a fault of the tool, not of your call. Do not repeat the call; report it or try another way.',
    retryable: false,
    attempts: attempt,
    issues: listed.map((i) => ({ path: i.path.map(String).join('.') || '(root)', message: i.message.slice(0, 300) })),
  };
}

/** The output within the tool's budget (the paging tool's pages are bounded by their own size). */
function boundOutput(tool: Tool, output: unknown, ctx: ToolContext, deps: ResolvedDeps): Promise<unknown> {
  const entry = tool.contract.catalogEntry;
  if (entry.name === READ_STORED_OUTPUT_TOOL) return Promise.resolve(output);
  return boundToolOutput(output, deps.payloadStore, {
    budget: budgetOf(entry),
    idempotencyKey: ctx.idempotencyKey,
    runId: ctx.runKey ?? ctx.runId,
    compensable: entry.undo !== undefined,
    ...outputRetention(entry.longCall),
  });
}

/** A claim check could not be read or written: missing is permanent, a store outage transient. */
function payloadFailure(
  entry: ToolCatalogEntry,
  retry: ToolRetrySettings,
  attempt: number,
  cause: unknown,
): ApplicationFailure {
  if (cause instanceof ClaimCheckMissingError) {
    return toolFailure(
      {
        status: 'error',
        code: TOOL_ERROR_CODES.NOT_FOUND,
        message: cause.message,
        hint: 'Configure a shared transcript store (DURABLE_TOOLS_TRANSCRIPT_STORE=postgres) for several workers.',
        retryable: false,
        attempts: attempt,
      },
      { mayHaveHadEffect: false },
    );
  }
  const lastAttempt = attempt >= retry.maximumAttempts;
  return toolFailure(
    {
      status: 'error',
      code: TOOL_ERROR_CODES.UNAVAILABLE,
      message: `The transcript store could not be reached for "${entry.name}": ${cause instanceof Error ? cause.message : String(cause)}`,
      hint: 'Try again later.',
      retryable: true,
      attempts: attempt,
    },
    { mayHaveHadEffect: false },
    lastAttempt ? undefined : Math.min(retry.maxDelayMs, retry.initialDelayMs * 2 ** (attempt - 1)),
  );
}

function storeUnavailable(
  entry: ToolCatalogEntry,
  retry: ToolRetrySettings,
  attempt: number,
  cause: unknown,
  phase: StorePhase,
): ApplicationFailure {
  const deterministic = deterministicStoreFailure(entry.name, phase, attempt, cause);
  if (deterministic) return toolFailure(deterministic.observation, deterministic.facts);
  const observation: ToolErrorObservation = {
    status: 'error',
    code: TOOL_ERROR_CODES.UNAVAILABLE,
    message: `The idempotency store could not be reached for "${entry.name}": ${cause instanceof Error ? cause.message : String(cause)}`,
    hint: 'Try again later.',
    retryable: true,
    attempts: attempt,
  };
  const lastAttempt = attempt >= retry.maximumAttempts;
  return toolFailure(
    observation,
    { mayHaveHadEffect: true },
    lastAttempt ? undefined : Math.min(retry.maxDelayMs, retry.initialDelayMs * 2 ** (attempt - 1)),
  );
}

/** The failure a fused step's attempt of the call threw, thrown again by its own local activity's first attempt. */
function fusedAttemptFailure(failure: FusedAttemptFailure): ApplicationFailure {
  return ApplicationFailure.create({
    message: String(failure.message),
    ...(typeof failure.type === 'string' ? { type: failure.type } : {}),
    nonRetryable: failure.nonRetryable === true,
    ...(Array.isArray(failure.details) ? { details: failure.details } : {}),
    ...(typeof failure.nextRetryDelayMs === 'number' ? { nextRetryDelay: failure.nextRetryDelayMs } : {}),
  });
}
