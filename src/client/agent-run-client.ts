import {
  Client,
  Connection,
  type ClientInterceptors,
  type WorkflowClientInterceptor,
  InternalConnectionLikeSymbol,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  type InternalConnectionLike,
  type WorkflowHandle,
} from '@temporalio/client';
import { identityRecord, STARTED_BY_MEMO, type CallerIdentity } from '../contract/caller-identity';
import { GRANTED_TOOLS_MEMO, type RunGrant } from '../contract/run-grant';
import type { RunGrantStore } from '../stores/audit/run-grant-store';
import { ApplicationFailure, CancelledFailure, type Duration } from '@temporalio/common';
import { randomUUID } from 'node:crypto';
import { connectionOptions, connectionSettingsFromEnv, type ConnectionSettings } from './connection-settings';
import { tracingClientInterceptors } from '../telemetry/client-tracing';
import { SEARCH_ATTRIBUTES } from '../contract/search-attributes';
import { ensureApprovalSearchAttribute } from './approval-search-attribute';
import { ensureStatusSearchAttribute } from './status-search-attribute';
import { formatBytes, jsonByteLength, PAYLOAD_LIMITS } from '../contract/payload-limits';
import { PayloadBudgetError } from './payload-budget-error';
import { getRunStateQuery } from '../contract/agent-run-messages';
import type { AgentRunInput, AgentRunResult, AgentRunState } from '../contract/agent-run-types';
import { isFailedRunStatus } from '../contract/run-outcome-statuses';
import { FAST_PATH_LIMITS, fastPathByDefault } from '../contract/fast-path';
import { encryptedDataConverter } from '../encryption/encryption-codec';
import { resolveEncryptionKeys, type EncryptionKeyring } from '../encryption/encryption-keys';
import { withLiveProgress } from '../long-calls/live-progress';
import { AgentRunStartError } from './agent-run-start-error';
import { assertKnownRunInputFields } from './run-input-fields';
import { agentRunStateOf } from './agent-run-state-of';
import { retryTransientReads } from './transient-read-retry';

/** The workflow type of an agent run. */
export const AGENT_RUN_WORKFLOW = 'agentRun';

/** The memo field of a dry run: the workflow id of the run it is a dry run of. */
export const DRY_RUN_MEMO = 'dryRunOf';

/** Options of {@link connectClient}. */
export interface ConnectClientOptions {
  /**
   * Payload encryption keys (the workers' keys, docs/security.md, "Encryption"); `false` turns it off. Default:
   * `DURABLE_TOOLS_ENCRYPTION_KEYS` / `DURABLE_TOOLS_ENCRYPTION_KEYS_FILE` when set, else off.
   */
  encryption?: EncryptionKeyring | false;
  /**
   * Start runs inside OpenTelemetry spans (`StartWorkflow:agentRun`) of the global tracer provider and pass the
   * trace context on, so a traced worker's spans join the caller's trace (see `tracingClientInterceptors`).
   */
  tracing?: boolean;
  /** Client interceptors of the caller's (after the tracing ones, when `tracing` is on). */
  interceptors?: ClientInterceptors;
}

/**
 * Connects a Temporal client with the given settings (by default from the environment), encrypting payloads
 * when encryption keys are configured.
 *
 * @example
 * ```ts
 * const client = await connectClient();
 * ```
 */
export async function connectClient(
  settings: ConnectionSettings = connectionSettingsFromEnv(),
  options: ConnectClientOptions = {},
): Promise<Client> {
  const dataConverter = encryptedDataConverter(resolveEncryptionKeys(options.encryption));
  const connection = await Connection.connect(connectionOptions(settings));
  const tracing = options.tracing ? await tracingClientInterceptors() : undefined;
  const interceptors =
    tracing && options.interceptors
      ? {
          ...tracing,
          ...options.interceptors,
          workflow: [workflowInterceptors(tracing), workflowInterceptors(options.interceptors)].flat(),
        }
      : (tracing ?? options.interceptors);
  return new Client({
    connection,
    namespace: settings.namespace,
    ...(dataConverter ? { dataConverter } : {}),
    ...(interceptors ? { interceptors } : {}),
  });
}

/** The workflow interceptors of a client's, as a list. */
function workflowInterceptors(interceptors: ClientInterceptors): WorkflowClientInterceptor[] {
  const workflow = interceptors.workflow ?? [];
  return Array.isArray(workflow) ? workflow : [];
}

/**
 * Whether an agent run may start under the workflow id of a closed run (Temporal's names):
 * - `REJECT_DUPLICATE` (default): never. A workflow id names one run, for good.
 * - `ALLOW_DUPLICATE_FAILED_ONLY`: when the last run with the id did not complete (it ended `failed`,
 *   `compensated`, `compensation_failed` or `cancelled`, or was terminated or timed out). The new run is a
 *   run of its own: its keys, compensations and stored outputs are not the earlier run's
 *   (docs/run-ownership.md).
 */
export type AgentRunIdReusePolicy = 'REJECT_DUPLICATE' | 'ALLOW_DUPLICATE_FAILED_ONLY';

const ID_REUSE_POLICIES: readonly AgentRunIdReusePolicy[] = ['REJECT_DUPLICATE', 'ALLOW_DUPLICATE_FAILED_ONLY'];

/** Options of {@link startAgentRun}. */
export interface StartAgentRunOptions {
  /** Task queue the workers poll (default: from the environment, `durable-tools`). */
  taskQueue?: string;
  /**
   * Workflow id of the run (default: `agent-run-<uuid>`). A start with the id of an existing run, running
   * or closed, starts nothing and returns that run (`started: false`).
   */
  workflowId?: string;
  /**
   * The workflow id under its old name (not Temporal's run id): read when `workflowId` is absent; both given
   * and different throw `CONFLICTING_WORKFLOW_ID`.
   * @deprecated Use workflowId.
   */
  runId?: string;
  /** Whether the id of a closed run that did not complete may start a new run (default `REJECT_DUPLICATE`). */
  workflowIdReusePolicy?: AgentRunIdReusePolicy;
  /**
   * Start-to-close timeout of the run's workflow tasks (at most 120 s). Default: 4 s for a run on the fast path,
   * the default (`FAST_PATH_LIMITS.workflowTaskTimeoutMs`), Temporal's 10 s for one that opts out (`fastPath: false`). It is how long a
   * step of a fast-path run (local activities inside one workflow task) waits after its worker died before
   * another worker runs it again: the server only notices the death when this timeout passes. The price of a
   * short one: a workflow task that cannot finish within it (a replay of a long history on a starved worker)
   * times out and is retried; from the fourth attempt on the server lengthens the timeout (by 5 s, 10 s, 20 s...)
   * until it fits (docs/operations.md, "Recovery after a crash"). Continue-as-new keeps it. Local activities are
   * not bounded by it: the SDK completes the task at 80% of it and goes on in a new one.
   */
  workflowTaskTimeout?: Duration;
  /**
   * Ask the server to hand the run's first workflow task straight back to a worker of this process (Temporal's
   * eager workflow start), instead of queueing it for a poll: one round trip less per run. It needs a client
   * over the worker's connection (`new Client({ connection: nativeConnection })`, the `NativeConnection` given
   * to `createWorker`), else `startAgentRun` throws `EAGER_START_UNSUPPORTED`. When no worker of this process
   * polls the task queue (or the server declines), the run starts as usual (`eagerlyStarted: false`).
   * Default false.
   */
  eagerStart?: boolean;
  /**
   * The run's authority (docs/security.md, "Authority of a run"): recorded in `store` (the workers' grant store: their
   * audit store) under the workflow id before the run starts, once (a grant already recorded for the id stays). A run
   * with a grant calls only its `tools`, its children only theirs that are also its; the tool activity refuses any
   * other call with `TOOL_NOT_PERMITTED`, whoever scheduled it. Without it the run has no grant: it calls every tool
   * but the workers' restricted ones.
   */
  grant?: { store: RunGrantStore; tools: readonly string[] };
  /**
   * Who starts the run, as authentication established it: the memo's `startedBy` and the holder of its grant. The
   * MCP server's approval rules read it: nobody approves a call of a run they started, through whatever client.
   */
  startedBy?: CallerIdentity;
}

/**
 * What {@link startAgentRun} returns: the run's handle (it follows the run across continue-as-new), and
 * whether this call started it.
 */
export type AgentRunHandle = WorkflowHandle & {
  /**
   * True when this call started the run; false when a run with the id already existed (running or closed)
   * and this is its handle: nothing was started, and the input of this call was not used.
   */
  readonly started: boolean;
  /** Run id of the run's first execution (the same across continue-as-new and a reset). */
  readonly firstExecutionRunId: string;
  /** True when the server handed the run's first workflow task to a worker of this process (`eagerStart`). */
  readonly eagerlyStarted?: boolean;
};

/**
 * Starts an agent run and returns its handle. Its workflow id (`workflowId`) names one run: a second
 * start with the id of an existing run (running or closed) starts nothing and returns that run's handle with
 * `started: false` (with `workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY'`, the id of a run that did not
 * complete starts a new run instead).
 *
 * @throws {@link PayloadBudgetError} `RUN_INPUT_TOO_LARGE` when the input is above 256 KB.
 * @throws {@link AgentRunStartError} `RUN_ID_TAKEN` when the id belongs to a workflow that is not an agent
 * run; `INVALID_ID_REUSE_POLICY` for a reuse policy other than the two above; `CONFLICTING_WORKFLOW_ID` when
 * `workflowId` and the deprecated `runId` are both given and differ; `EAGER_START_UNSUPPORTED` for `eagerStart`
 * with a client that is not over a worker's `NativeConnection`.
 *
 * @example
 * ```ts
 * const handle = await startAgentRun(client, {
 *   goal: 'Book a trip to Berlin',
 *   model: { provider: 'scripted', script },
 * });
 * const result = await waitForAgentRun(handle);
 * ```
 */
export async function startAgentRun(
  client: Client,
  input: AgentRunInput,
  options: StartAgentRunOptions = {},
): Promise<AgentRunHandle> {
  assertKnownRunInputFields(input);
  const reusePolicy = options.workflowIdReusePolicy ?? 'REJECT_DUPLICATE';
  if (!ID_REUSE_POLICIES.includes(reusePolicy)) {
    throw new AgentRunStartError(
      `workflowIdReusePolicy must be ${ID_REUSE_POLICIES.join(' or ')} (got ${JSON.stringify(reusePolicy)}): ` +
        'an agent run never takes over the id of a completed or running run.',
      'INVALID_ID_REUSE_POLICY',
    );
  }
  const inputBytes = jsonByteLength(input);
  if (inputBytes > PAYLOAD_LIMITS.runInputBytes) {
    throw new PayloadBudgetError(
      `The run's input is ${formatBytes(inputBytes)}; at most ${formatBytes(PAYLOAD_LIMITS.runInputBytes)} is accepted ` +
        '(it travels with every continue-as-new and every model call). Put large data in a tool the model can call.',
      'RUN_INPUT_TOO_LARGE',
    );
  }
  if (options.eagerStart === true && !supportsEagerStart(client)) {
    throw new AgentRunStartError(
      "eagerStart needs a client over the worker's connection: new Client({ connection: nativeConnection }), with " +
        'the NativeConnection the worker of this process was created with (or leave eagerStart out).',
      'EAGER_START_UNSUPPORTED',
    );
  }
  const workflowId = workflowIdOf(options) ?? `agent-run-${randomUUID()}`;
  // A run whose input opts out of the status is not given one at start either: it would say running for ever.
  const track =
    (await ensureStatusSearchAttribute(client, clientAddress(client))) && input.trackStatusSearchAttribute !== false;
  const trackApprovals = await ensureApprovalSearchAttribute(client, clientAddress(client));
  const holder = options.startedBy ? identityRecord(options.startedBy) : undefined;
  // Recorded before the run exists, so its first call already finds it (a recorded grant is never replaced).
  if (options.grant) await options.grant.store.recordGrant(runGrantOf(workflowId, options.grant.tools, holder));
  const memo = {
    ...(input.dryRun ? { [DRY_RUN_MEMO]: input.dryRun.sourceWorkflowId } : {}),
    ...(holder ? { [STARTED_BY_MEMO]: holder } : {}),
    // The run's grant, as recorded in the store, in its history too.
    ...(options.grant ? { [GRANTED_TOOLS_MEMO]: [...new Set(options.grant.tools)].sort() } : {}),
  };
  let handle: Awaited<ReturnType<typeof client.workflow.start>>;
  try {
    handle = await client.workflow.start(AGENT_RUN_WORKFLOW, {
      taskQueue: options.taskQueue ?? connectionSettingsFromEnv().taskQueue,
      workflowId,
      workflowIdReusePolicy: reusePolicy,
      workflowIdConflictPolicy: 'FAIL',
      ...workflowTaskTimeoutOf(input, options),
      ...(options.eagerStart === true ? { requestEagerStart: true } : {}),
      args: [
        {
          ...input,
          trackStatusSearchAttribute: input.trackStatusSearchAttribute ?? track,
          trackApprovalSearchAttribute: input.trackApprovalSearchAttribute ?? trackApprovals,
        },
      ],
      staticSummary:
        `${input.dryRun ? `Dry run of ${input.dryRun.sourceWorkflowId}` : 'Agent run'}: ${input.goal}`.slice(0, 200),
      staticDetails: `**Goal:** ${input.goal}`.slice(0, 10_000),
      // A dry run says so in its memo, which listings return: `eval` leaves dry runs out of its queries.
      ...(Object.keys(memo).length > 0 ? { memo } : {}),
      ...(track ? { typedSearchAttributes: [{ key: SEARCH_ATTRIBUTES.runStatus, value: 'running' }] } : {}),
    });
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return existingAgentRun(client, workflowId);
    throw error;
  }
  return { ...handle, started: true };
}

/** The grant of a new run: its tools, sorted and without repeats. */
function runGrantOf(workflowId: string, tools: readonly string[], holder: CallerIdentity | undefined): RunGrant {
  return { workflowId, tools: [...new Set(tools)].sort(), ...(holder ? { holder } : {}), grantedAt: Date.now() };
}

/** The run's workflow task timeout: the caller's, else the fast path's unless the run opts out, else none (Temporal's). */
function workflowTaskTimeoutOf(
  input: AgentRunInput,
  options: StartAgentRunOptions,
): { workflowTaskTimeout?: Duration } {
  if (options.workflowTaskTimeout !== undefined) return { workflowTaskTimeout: options.workflowTaskTimeout };
  return fastPathByDefault(input.fastPath) ? { workflowTaskTimeout: FAST_PATH_LIMITS.workflowTaskTimeoutMs } : {};
}

/** Whether the client's connection can start a workflow eagerly (a worker's `NativeConnection`). */
function supportsEagerStart(client: Client): boolean {
  const connection = client.connection as InternalConnectionLike;
  return connection[InternalConnectionLikeSymbol]?.supportsEagerStart === true;
}

/** `workflowId`, or the deprecated `runId` when it is absent; both given and different is an error. */
function workflowIdOf(options: StartAgentRunOptions): string | undefined {
  const { workflowId, runId } = options;
  if (workflowId !== undefined && runId !== undefined && workflowId !== runId) {
    throw new AgentRunStartError(
      `workflowId ${JSON.stringify(workflowId)} and runId ${JSON.stringify(runId)} differ: runId is the old name ` +
        'of workflowId, so give only workflowId.',
      'CONFLICTING_WORKFLOW_ID',
    );
  }
  return workflowId ?? runId;
}

/** The handle of the agent run that already has this workflow id (the chain of its latest run). */
async function existingAgentRun(client: Client, workflowId: string): Promise<AgentRunHandle> {
  const description = await client.workflow.getHandle(workflowId).describe();
  if (description.type !== AGENT_RUN_WORKFLOW) {
    throw new AgentRunStartError(
      `The workflow id ${workflowId} belongs to a ${description.type} workflow, not an agent run; choose another id.`,
      'RUN_ID_TAKEN',
    );
  }
  const firstExecutionRunId = description.raw.workflowExecutionInfo?.firstRunId || description.runId;
  const handle = client.workflow.getHandle(workflowId, undefined, { firstExecutionRunId });
  return { ...handle, started: false, firstExecutionRunId };
}

/**
 * Waits for an agent run to end and returns its result, whatever its outcome: a run that ended `failed`,
 * `compensated` or `compensation_failed` ends its workflow as Failed with the result in the failure's details,
 * and a `cancelled` run ends it as Cancelled (its result is then read with the `getRunState` query, which needs
 * a worker). A read the server answers with a transient gRPC failure (a server shedding load: DEADLINE_EXCEEDED,
 * RESOURCE_EXHAUSTED, UNAVAILABLE) is asked again, for up to 5 minutes of such failures in a row. Any other failure
 * (the workflow was terminated, timed out, or failed in the engine) is rethrown.
 *
 * @example
 * ```ts
 * const result = await waitForAgentRun(handle);
 * if (result.status !== 'completed') console.log(result.status, result.reason);
 * ```
 */
export async function waitForAgentRun(handle: WorkflowHandle): Promise<AgentRunResult> {
  try {
    return agentRunStateOf((await retryTransientReads(() => handle.result())) as AgentRunResult);
  } catch (error) {
    const outcome = runResultOfFailure(error);
    if (outcome) return outcome;
    if (error instanceof WorkflowFailedError && error.cause instanceof CancelledFailure) {
      return handle.query(getRunStateQuery).then(agentRunStateOf, () => Promise.reject(error));
    }
    throw error;
  }
}

/**
 * The result carried by the failure of a run that ended `failed`, `compensated` or `compensation_failed`
 * (a `WorkflowFailedError` whose cause is an `ApplicationFailure` typed with the status); undefined for any
 * other error.
 */
export function runResultOfFailure(error: unknown): AgentRunResult | undefined {
  if (!(error instanceof WorkflowFailedError) || !(error.cause instanceof ApplicationFailure)) return undefined;
  const { type, details } = error.cause;
  const result = details?.[0] as AgentRunResult | undefined;
  return result && isFailedRunStatus(type ?? undefined) && result.status === type ? agentRunStateOf(result) : undefined;
}

/**
 * Reads the state of a live (or finished, while its worker can answer queries) agent run, with the latest
 * progress of each running tool call (`step.progress`, from its activity's heartbeat details).
 */
export async function getAgentRunState(client: Client, workflowId: string): Promise<AgentRunState> {
  const state = agentRunStateOf(await client.workflow.getHandle(workflowId).query(getRunStateQuery));
  return withLiveProgress(client, state);
}

/**
 * URL of a run in the Temporal web UI.
 *
 * @example
 * ```ts
 * agentRunUrl('http://127.0.0.1:8233', 'default', 'agent-run-1'); // http://127.0.0.1:8233/namespaces/default/workflows/agent-run-1
 * ```
 */
export function agentRunUrl(uiBaseUrl: string, namespace: string, workflowId: string, runId?: string): string {
  const base = `${uiBaseUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
  return runId ? `${base}/${encodeURIComponent(runId)}/history` : base;
}

/** One Temporal history, as `fetchHistory()` returns it. */
export type RunHistory = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;

/**
 * The histories of an agent run across continue-as-new: the run that started with `firstRunId` (a handle's
 * `firstExecutionRunId`) and every run it
 * continued as new into, oldest first.
 *
 * @example
 * ```ts
 * const histories = await fetchRunHistories(client, handle.workflowId, handle.firstExecutionRunId);
 * ```
 */
export async function fetchRunHistories(client: Client, workflowId: string, firstRunId: string): Promise<RunHistory[]> {
  const histories: RunHistory[] = [];
  let runId: string | undefined = firstRunId;
  while (runId) {
    const history: RunHistory = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    histories.push(history);
    const last = history.events?.[history.events.length - 1];
    runId = last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return histories;
}

/** The address a client is connected to, when it is a plain `Connection` (else an empty string). */
export function clientAddress(client: Client): string {
  const options = (client.connection as Partial<Connection>).options;
  return options?.address ?? '';
}
