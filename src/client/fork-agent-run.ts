import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { decodePayloads } from '../contract/decode-payloads';
import type { AgentRunFork, AgentRunInput, AgentRunState } from '../contract/agent-run-types';
import type { ModelSettings } from '../contract/model-types';
import { formatBytes, jsonByteLength, PAYLOAD_LIMITS } from '../contract/payload-limits';
import { AGENT_RUN_WORKFLOW, startAgentRun, type AgentRunHandle } from './agent-run-client';
import { AgentRunForkError } from './agent-run-fork-error';
import { buildForkPrefix } from './fork-prefix';
import { buildDryRunRecord, fitDryRunRecord } from './dry-run-record';
import type { DryRunReadOnlyTools } from '../contract/dry-run-types';
import { readRun } from './read-run';

/** Bytes of the input the `dryRun` field itself takes besides its record (its name, quotes, comma). */
const RECORD_SLACK = 32;

/** Options of {@link forkAgentRun}. */
export interface ForkAgentRunOptions {
  /** The first step the new run takes itself; steps 1 to `fromStep - 1` are the source's, as recorded. */
  fromStep: number;
  /** The model from `fromStep` on (default: the source's). */
  model?: ModelSettings;
  /** The goal of the new run (default: the source's); it is the first message of the new run's transcript. */
  goal?: string;
  /** More input fields that replace the source's (limits, allowedTools, failurePolicy, ...). */
  input?: Partial<Omit<AgentRunInput, 'goal' | 'model' | 'fork' | 'dryRun' | 'carriedOver'>>;
  /** Workflow id of the new run (default `agent-run-<uuid>`), as `startAgentRun`'s `workflowId`. */
  workflowId?: string;
  /** Task queue of the new run (default: the source's). */
  taskQueue?: string;
  /**
   * Makes the new run dry: from `fromStep` on no call with effects runs; each is answered from the source's
   * recorded call of the same tool with the same validated arguments, or refused with `DRY_RUN_NO_RECORD`.
   * With `fromStep: 1` it is a dry re-run of the whole source. `readOnlyTools`: read-only tools run for real
   * (`'run'`, default) or are answered from the record too (`'record'`). See docs/fork.md.
   */
  dryRun?: boolean | { readOnlyTools?: DryRunReadOnlyTools };
}

/** A finished source run as a fork reads it. */
interface ForkSource {
  state: AgentRunState;
  input: AgentRunInput;
  taskQueue: string;
}

/**
 * Starts a new agent run that takes steps 1 to `fromStep - 1` from a finished run as that run recorded them
 * (no tool runs and no model is asked for them) and goes on from step `fromStep` with the current worker's
 * tools and the given model, goal and input. The new run's steps are its own: new effects get the new run's
 * keys, and it compensates only those; the forked steps (marked `forked` in its state) belong to the source
 * run, which alone may compensate them. See docs/fork.md.
 *
 * @throws {@link AgentRunForkError} when the source is unknown, not an agent run, still running or unreadable,
 * when it has fewer than `fromStep - 1` recorded steps, when the prefix does not fit the run input budget, or
 * when a fork that is not dry would go on from the steps of a dry run.
 *
 * @example
 * ```ts
 * const handle = await forkAgentRun(client, 'agent-run-1', { fromStep: 3, model: { provider: 'openai' } });
 * const result = await waitForAgentRun(handle);
 * ```
 */
export async function forkAgentRun(
  client: Client,
  sourceWorkflowId: string,
  options: ForkAgentRunOptions,
): Promise<AgentRunHandle> {
  const source = await readForkSource(client, sourceWorkflowId);
  if (source.state.dryRun && !options.dryRun && options.fromStep > 1) {
    throw new AgentRunForkError(
      `Run ${sourceWorkflowId} is a dry run: its steps had no effects, so a fork cannot go on from them for real. ` +
        `Fork it with dryRun, or fork ${source.state.dryRun.sourceWorkflowId}, the run it is a dry run of.`,
      'SOURCE_IS_DRY_RUN',
    );
  }
  const fork = buildForkPrefix({ workflowId: sourceWorkflowId, state: source.state }, options.fromStep);
  const input = forkInput(source.input, fork, options);
  const dryRun = options.dryRun === true ? {} : options.dryRun || undefined;
  if (dryRun) {
    const from = { workflowId: sourceWorkflowId, state: source.state };
    const record = buildDryRunRecord(from, options.fromStep, dryRun.readOnlyTools ?? 'run');
    // The record takes what the rest of the input leaves of the run input budget (RECORD_SLACK for the field).
    input.dryRun = fitDryRunRecord(record, PAYLOAD_LIMITS.runInputBytes - jsonByteLength(input) - RECORD_SLACK);
  }
  const bytes = jsonByteLength(input);
  if (bytes > PAYLOAD_LIMITS.runInputBytes) {
    throw new AgentRunForkError(
      `A ${dryRun ? 'dry ' : ''}fork of run ${sourceWorkflowId} from step ${options.fromStep} needs an input of ` +
        `${formatBytes(bytes)} (the recorded steps travel in it); at most ` +
        `${formatBytes(PAYLOAD_LIMITS.runInputBytes)} is accepted. ` +
        (dryRun ? 'Its record is too large for a dry run.' : 'Fork from an earlier step.'),
      'FORK_TOO_LARGE',
    );
  }
  return startAgentRun(client, input, {
    taskQueue: options.taskQueue ?? source.taskQueue,
    ...(options.workflowId !== undefined ? { workflowId: options.workflowId } : {}),
  });
}

/** The new run's input: the source's, without what belongs to the source alone, with the overrides and the prefix. */
export function forkInput(source: AgentRunInput, fork: AgentRunFork, options: ForkAgentRunOptions): AgentRunInput {
  const {
    carriedOver: _carriedOver,
    fork: _fork,
    dryRun: _dryRun,
    trackStatusSearchAttribute: _status,
    trackApprovalSearchAttribute: _approvals,
    ...kept
  } = source;
  const {
    carriedOver: _ignored,
    fork: _ignoredFork,
    dryRun: _ignoredDryRun,
    ...overrides
  } = (options.input ?? {}) as Partial<AgentRunInput>;
  return {
    ...kept,
    ...overrides,
    goal: options.goal ?? source.goal,
    model: options.model ?? source.model,
    fork,
  };
}

/** The source's state (its result), its first input and its task queue; refuses a source that cannot be forked. */
async function readForkSource(client: Client, workflowId: string): Promise<ForkSource> {
  const handle = client.workflow.getHandle(workflowId);
  const description = await handle.describe().catch((error: unknown) => {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
    throw new AgentRunForkError(`No run ${workflowId} in namespace ${client.options.namespace}.`, 'SOURCE_NOT_FOUND');
  });
  if (description.type !== AGENT_RUN_WORKFLOW) {
    throw new AgentRunForkError(
      `${workflowId} is a ${description.type} workflow, not an agent run.`,
      'SOURCE_NOT_AGENT_RUN',
    );
  }
  if (description.status.name === 'RUNNING') {
    throw new AgentRunForkError(
      `Run ${workflowId} is still running: its steps are not final. Fork it once it has ended (or cancel it).`,
      'SOURCE_RUNNING',
    );
  }
  const { state } = await readRun(client, workflowId);
  if (!state) {
    throw new AgentRunForkError(
      `The state of run ${workflowId} (${description.status.name.toLowerCase()}) cannot be read: no worker answers ` +
        'its query. Start a worker on its task queue and try again.',
      'SOURCE_UNREADABLE',
    );
  }
  const firstRunId = description.raw.workflowExecutionInfo?.firstRunId || description.runId;
  return { state, input: await firstInput(client, workflowId, firstRunId), taskQueue: description.taskQueue };
}

/** The input the run was started with (its first execution's, decoded as the client decodes payloads). */
async function firstInput(client: Client, workflowId: string, firstRunId: string): Promise<AgentRunInput> {
  const history = await client.workflow.getHandle(workflowId, firstRunId).fetchHistory();
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  const [input] = await decodePayloads(client.options.loadedDataConverter, started?.input?.payloads);
  return input as AgentRunInput;
}
