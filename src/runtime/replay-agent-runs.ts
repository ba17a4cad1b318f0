import { isGrpcServiceError, type Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { ReplayAgentRunsError } from './replay-agent-runs-error';
import { encryptedDataConverter } from '../encryption/encryption-codec';
import { encryptionKeysFromEnv, resolveEncryptionKeys, type EncryptionKeyring } from '../encryption/encryption-keys';
import { installPrivateRuntimeIfNone } from '../telemetry/private-runtime';
import { replayOutcome, type ReplayEvent } from './replay-outcome';
import { engineBundleOptions } from './engine-bundle-options';

/** Runs a visibility query selects at most this many by default. */
export const DEFAULT_REPLAY_LIMIT = 100;

/** gRPC status of an execution the server does not have. */
const GRPC_NOT_FOUND = 5;

/** Options of {@link replayAgentRuns}: which recorded runs, and which workflow code they are replayed against. */
export interface ReplayAgentRunsOptions {
  /** The runs to replay, by workflow id: the latest run of each. Give these or `query`. */
  workflowIds?: readonly string[];
  /** With exactly one workflow id: replay this run of it instead of the latest. */
  runId?: string;
  /**
   * A Temporal visibility query selecting the runs, e.g. `WorkflowType = 'agentRun' AND CloseTime > '…'`,
   * sent as it is (every run it matches, of any workflow type, is replayed). Give this or `workflowIds`.
   */
  query?: string;
  /** With `query`: at most this many runs, newest first (default {@link DEFAULT_REPLAY_LIMIT}). */
  limit?: number;
  /**
   * The workflow code to replay against: a module (file or folder) exporting the workflow functions.
   * Default: this package's own workflows, the ones `createWorker` runs.
   */
  workflowsPath?: string;
  /**
   * The keys that decrypt the recorded payloads (encrypted runs, docs/security.md); `false`: none. Default:
   * `DURABLE_TOOLS_ENCRYPTION_KEYS` / `DURABLE_TOOLS_ENCRYPTION_KEYS_FILE` when set.
   */
  encryption?: EncryptionKeyring | false;
  /** Called once per history as soon as it is replayed (or could not be), for progress output. */
  onResult?: (result: AgentRunReplayResult) => void;
}

/** The replay of one recorded run. */
export interface AgentRunReplayResult {
  workflowId: string;
  /** The run replayed (absent when its history could not be fetched). */
  runId?: string;
  /**
   * `ok`: the current code issues the recorded commands; `nondeterministic`: it does not, so this run would fail
   * on a worker with this code; `failed`: the history could not be fetched or the workflow failed to replay.
   */
  outcome: 'ok' | 'nondeterministic' | 'failed';
  /** The first event the current code disagrees with (when `nondeterministic` and the replayer names it). */
  event?: ReplayEvent;
  /** What went wrong, in the replayer's or the server's words. */
  message?: string;
}

/** Every replayed run, and the counts. */
export interface AgentRunsReplayReport {
  results: AgentRunReplayResult[];
  /** How many histories were checked (all results). */
  replayed: number;
  nondeterministic: number;
  failed: number;
}

/** One run to replay: the latest of a workflow id when `runId` is absent. */
interface ReplayTarget {
  workflowId: string;
  runId?: string;
}

/**
 * Determinism check before a deploy: fetches recorded run histories from the Temporal server and replays them
 * with Temporal's replayer against the current workflow code. A run the new code would not replay (its
 * commands differ from the recorded ones) is reported `nondeterministic`, with the first event it stops at:
 * deployed, that code would fail the run's next workflow task. Runs still in flight replay up to their last
 * event. Nothing is written to the server, and no activity runs.
 *
 * @example
 * ```ts
 * const report = await replayAgentRuns(client, { query: "WorkflowType = 'agentRun' AND CloseTime > '2026-01-01T00:00:00Z'" });
 * for (const r of report.results) if (r.outcome !== 'ok') console.error(r.workflowId, r.event, r.message);
 * if (report.nondeterministic > 0) process.exitCode = 1;
 * ```
 */
export async function replayAgentRuns(client: Client, options: ReplayAgentRunsOptions): Promise<AgentRunsReplayReport> {
  const targets = await replayTargets(client, options);
  const encryption =
    options.encryption === undefined ? encryptionKeysFromEnv() : resolveEncryptionKeys(options.encryption);
  const results: AgentRunReplayResult[] = [];
  const report = (result: AgentRunReplayResult): void => {
    results.push(result);
    options.onResult?.(result);
  };
  // The replayer takes one history at a time: each result is about the history fetched last.
  const last: { history: temporal.api.history.v1.IHistory } = { history: {} };
  if (targets.length > 0) {
    installPrivateRuntimeIfNone();
    const replayed = Worker.runReplayHistories(
      {
        // The engine's own workflows replay as its workers run them (engine-bundle-options.ts).
        ...(options.workflowsPath
          ? { workflowsPath: options.workflowsPath }
          : {
              workflowsPath: require.resolve('../workflows'),
              bundlerOptions: engineBundleOptions(),
            }),
        replayName: 'durable-tools-replay',
        ...(encryption ? { dataConverter: encryptedDataConverter(encryption)! } : {}),
      },
      fetchedHistories(client, targets, last, report),
    );
    for await (const { workflowId, runId, error } of replayed) {
      report({ workflowId, runId, ...replayOutcome(error, last.history) });
    }
  }
  return {
    results,
    replayed: results.length,
    nondeterministic: results.filter((r) => r.outcome === 'nondeterministic').length,
    failed: results.filter((r) => r.outcome === 'failed').length,
  };
}

/** The runs the options ask for; a query is run to its end (up to the limit) before anything is replayed. */
async function replayTargets(client: Client, options: ReplayAgentRunsOptions): Promise<ReplayTarget[]> {
  const ids = [...new Set(options.workflowIds ?? [])];
  if (ids.length > 0 === (options.query !== undefined)) {
    throw new ReplayAgentRunsError('Give either workflow ids or a visibility query.', 'INVALID_OPTIONS');
  }
  if (options.runId !== undefined && ids.length !== 1) {
    throw new ReplayAgentRunsError('A run id goes with exactly one workflow id.', 'INVALID_OPTIONS');
  }
  if (options.query === undefined) return ids.map((workflowId) => ({ workflowId, runId: options.runId }));
  const limit = options.limit ?? DEFAULT_REPLAY_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) {
    throw new ReplayAgentRunsError(`The limit must be a positive integer, not ${limit}.`, 'INVALID_OPTIONS');
  }
  const targets: ReplayTarget[] = [];
  try {
    for await (const info of client.workflow.list({ query: options.query, pageSize: Math.min(limit, 1000) })) {
      targets.push({ workflowId: info.workflowId, runId: info.runId });
      if (targets.length >= limit) break;
    }
  } catch (error) {
    throw new ReplayAgentRunsError(
      `The server refused the query "${options.query}": ${serverMessage(error)}`,
      'QUERY_REJECTED',
      { cause: error },
    );
  }
  return targets;
}

/**
 * The histories of the targets, fetched one by one as the replayer asks for them (the one fetched last kept
 * in `last` for the outcome); a history that cannot be fetched is reported `failed` and skipped.
 */
async function* fetchedHistories(
  client: Client,
  targets: readonly ReplayTarget[],
  last: { history: temporal.api.history.v1.IHistory },
  report: (result: AgentRunReplayResult) => void,
): AsyncGenerator<{ workflowId: string; history: temporal.api.history.v1.IHistory }> {
  for (const { workflowId, runId } of targets) {
    let history: temporal.api.history.v1.IHistory;
    try {
      history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    } catch (error) {
      const message = isNotFound(error)
        ? `No workflow ${workflowId}${runId ? ` with run ${runId}` : ''} in namespace ${client.options.namespace}.`
        : `Could not fetch the history: ${serverMessage(error)}`;
      report({ workflowId, ...(runId ? { runId } : {}), outcome: 'failed', message });
      continue;
    }
    last.history = history;
    yield { workflowId, history };
  }
}

function isNotFound(error: unknown): boolean {
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  return [error, cause].some((e) => isGrpcServiceError(e) && e.code === GRPC_NOT_FOUND);
}

/** The server's own words: the gRPC details under the SDK's wrapping message when there are some. */
function serverMessage(error: unknown): string {
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  if (isGrpcServiceError(cause) && cause.details) return cause.details;
  if (isGrpcServiceError(error) && error.details) return error.details;
  return error instanceof Error ? error.message : String(error);
}
