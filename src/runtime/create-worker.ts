import { isAbsolute, resolve } from 'node:path';
import { enableTypeScriptFor } from './typescript-tools-module';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createApprovalActivities, type WorkerApprovalConfig } from '../activities/approval-activities';
import { createModelActivities } from '../activities/model-activities';
import { createRecordedModelActivities } from '../activities/recorded-model-turn';
import { createFusedStepActivities } from '../activities/fused-step';
import { planChainedTurn } from '../workflows/fused-chain-plan';
import { planFusedCalls } from '../workflows/fused-step-plan';
import { clearCatalog } from '../workflows/fused-clearance';
import type { AuditStore } from '../stores/audit/audit-store';
import { createAuditStore } from '../stores/audit/create-audit-store';
import { MemoryAuditStore } from '../stores/audit/memory-audit-store';
import { createToolActivities } from '../activities/tool-activities';
import { connectionOptions, connectionSettingsFromEnv, type ConnectionSettings } from '../client/connection-settings';
import type { IdempotencyStore } from '../stores/idempotency/idempotency-store';
import type { ModelProvider } from '../contract/model-types';
import type { TranscriptStore } from '../stores/transcripts/transcript-store';
import type { StreamStore } from '../stores/streams/stream-store';
import { openStreamStore, STREAM_STORE_ENV, streamStoreConfigFromEnv } from '../stores/streams/open-stream-store';
import type { Tool } from '../tools/define-tool';
import { createIdempotencyStore } from '../stores/idempotency/create-idempotency-store';
import { createIdempotencyReaper } from '../stores/idempotency/idempotency-reaper';
import { createToolRegistry, type ToolRegistry } from '../tools/tool-registry';
import { createTranscriptStore } from '../stores/transcripts/create-transcript-store';
import { createPayloadReaper } from '../stores/transcripts/payload-reaper';
import { modelProvidersFromEnv } from '../model/configured-model-providers';
import { createMcpHost, withMcpTools, type McpHost } from '../mcp/client/mcp-host';
import type { McpServersConfigInput } from '../mcp/client/mcp-config';
import { EngineWorker, EngineWorkerWithStackTraces } from './engine-worker';
import { tunedWorkerOptions, type DeadlockTimeoutOption } from './worker-tuning';
import { cachedWorkflowBundle } from './workflow-bundle-cache';
import { engineBundleOptions } from './engine-bundle-options';
import { withoutTaskTokenInActivityLogs } from '../telemetry/private-logs';
import { installPrivateRuntimeIfNone } from '../telemetry/private-runtime';
import { MemoryTranscriptStore } from '../stores/transcripts/memory-transcript-store';
import { withReadStoredOutputTool } from '../tools/read-stored-output-tool';
import { resolveArgumentGuard, type ArgumentGuardOptions } from '../guard/argument-guard-options';
import { encryptedDataConverter } from '../encryption/encryption-codec';
import { encryptionKeysFromEnv, resolveEncryptionKeys, type EncryptionKeyring } from '../encryption/encryption-keys';
import { withIdempotencyEncryption, withTranscriptEncryption } from '../encryption/encrypted-stores';
import { startTelemetryFromEnv } from '../telemetry/telemetry-from-env';
import {
  telemetryActivityDeps,
  telemetryWorkerOptions,
  type WorkerTelemetryOptions,
} from '../telemetry/worker-telemetry';

/** Options of {@link createWorker}. */
export interface CreateWorkerOptions {
  /** The tools this worker runs: a list or a registry. */
  tools: readonly Tool[] | ToolRegistry;
  /** Extra model providers by name (`scripted` is built in). */
  modelProviders?: Record<string, ModelProvider>;
  /** Connection settings (default: from the environment). */
  settings?: Partial<ConnectionSettings>;
  /** An existing connection; the caller closes it. */
  connection?: NativeConnection;
  /** A pre-built workflow bundle (tests and benchmarks build it once). */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /**
   * Without `workflowBundle`, the worker's workflow bundle is built once per version of the code and kept in
   * `dir` (default `~/.cache/durable-tools/workflow-bundles`, or under `DURABLE_TOOLS_CACHE_DIR`), so a worker
   * that starts again reads it instead of bundling for seconds (docs/operations.md, "Recovery after a crash").
   * `false` bundles at every start, as Temporal's Worker does.
   */
  workflowBundleCache?: { dir?: string } | false;
  /**
   * Whether the workflow threads keep Temporal's per-promise stack traces, which answer the `__stack_trace`
   * query (the Temporal UI's "Stack Trace" tab). Default `false`: capturing one for every promise a run
   * creates costs ~12% of a short fast-path run (docs/benchmarks.md, "Stack traces of workflow promises"), and
   * the engine's workflows are not the user's code; the query then answers "Workflow stack traces are not
   * enabled on this worker". `true` when debugging the engine itself. Error stack traces are not affected.
   */
  workflowStackTraces?: boolean;
  /**
   * Uniform random source in [0, 1) for retry jitter (default `Math.random`). Tests inject a seeded one
   * (`createSeededRandom` from `durable-tools/testing`) to know in advance which delays the engine will choose.
   */
  random?: () => number;
  /**
   * Durable idempotency keys for tools with effects (see `createIdempotencyStore`). Without a store a
   * retried attempt may run a tool again; the worker process (`npm run worker`, `npm run dev`) uses SQLite.
   */
  idempotencyStore?: IdempotencyStore;
  /** Lease of an idempotency key while a call runs (default 10 s, `TOOL_CALL_LEASE`). */
  leaseMs?: number;
  /**
   * Drain after taking over a key from a holder process proved dead (default 1 s), counted from when this worker
   * first knew that process dead (a worker that replaces a crashed one knows it from its start); `false` always
   * waits for the key's lease and takeover grace instead. See `ToolActivityDeps.deadHolderDrainMs` and
   * docs/exactly-once.md.
   */
  deadHolderDrainMs?: number | false;
  /**
   * Where run transcripts and claim checks (tool outputs above their budget) live (default: this process's
   * memory, which serves one worker only: with several workers use SQLite on one machine, Postgres beyond).
   */
  transcripts?: TranscriptStore;
  /**
   * Where model turns (text deltas, tool-call starts) and tool progress are streamed live, out of band, for
   * `streamAgentRun` and the SSE endpoint (see `openStreamStore`, docs/streaming.md). Without one nothing is
   * streamed. Readers must open the same store: SQLite for the processes of one machine, Postgres beyond.
   */
  streams?: StreamStore;
  /**
   * MCP servers whose tools this worker also runs, as `{ mcpServers: { name: {command, args, env, cwd} | {url,
   * headers} } }` (the worker owns the connections and closes them in `close()`), or a host you manage.
   * Their tools are named `${server}__${tool}`.
   */
  mcp?: McpServersConfigInput | McpHost;
  /**
   * Where the audit trail of gated calls goes (see `createAuditStore`; default: this process's memory). The
   * worker process (`npm run worker`, `npm run dev`) uses SQLite in `.data/audit.sqlite`. The tool activities read
   * the decisions there (a gated call runs only on one), so every worker of a task queue needs the same store.
   */
  auditStore?: AuditStore;
  /** Approval settings of this worker (whether runs may waive a tool's approval). */
  approvals?: WorkerApprovalConfig;
  /** OpenTelemetry tracing and metrics (see docs/telemetry.md). */
  telemetry?: WorkerTelemetryOptions;
  /**
   * Limits of the argument guard for this worker's tools: `maxDepth` (nesting of objects and arrays, default
   * 64, at most 256), `maxIssues` (problems listed in an `INVALID_ARGUMENTS` error, default 10, at most 20),
   * `maxIssueChars` (characters per problem, default 300, at most 1,000). A tool's own `argumentGuard` wins.
   * Checked before anything connects: a bad value throws `ArgumentGuardConfigError` (`INVALID_ARGUMENT_GUARD`).
   */
  argumentGuard?: ArgumentGuardOptions;
  /**
   * Payload encryption (docs/security.md, "Encryption"): the keys that encrypt every payload this worker writes to
   * Temporal and the results it keeps in the idempotency and transcript stores; `false` turns it off. Default:
   * `DURABLE_TOOLS_ENCRYPTION_KEYS` / `DURABLE_TOOLS_ENCRYPTION_KEYS_FILE` when set, else off.
   */
  encryption?: EncryptionKeyring | false;
  /**
   * Anything else Temporal's Worker accepts (concurrency, shutdown grace, interceptors, ...). Cache and
   * concurrency default to `tunedWorkerOptions()` (sized for many concurrent runs); these override them.
   * `isolateExecutionTimeout` (the SDK's workflow deadlock detector) is off by default because a pause of
   * the process during a workflow activation made it kill the worker (docs/pauses.md); set it to bring the
   * detector back.
   */
  workerOptions?: Partial<Omit<WorkerOptions, 'connection' | 'activities' | 'workflowsPath' | 'workflowBundle'>> &
    DeadlockTimeoutOption;
}

/** A created worker and the connection it owns. */
export interface DurableToolsWorker {
  worker: Worker;
  /** Closes the connection if this function opened it. Call after `worker.run()` resolves. */
  close(): Promise<void>;
}

/**
 * Creates a Temporal worker that runs agent-run workflows and one activity per tool (activity type =
 * tool name), plus the engine's `describeTools` and `callModel` activities and the built-in read-only
 * tool `read_stored_output` (pages through tool outputs stored above their budget).
 *
 * @example
 * ```ts
 * const { worker, close } = await createWorker({ tools: [searchFlights, bookFlight, cancelFlight] });
 * await worker.run(); // until SIGINT / SIGTERM
 * await close();
 * ```
 */
export async function createWorker(options: CreateWorkerOptions): Promise<DurableToolsWorker> {
  const argumentGuard = resolveArgumentGuard(options.argumentGuard);
  const encryption = resolveEncryptionKeys(options.encryption);
  const settings = { ...connectionSettingsFromEnv(), ...options.settings };
  const ownTools = 'catalog' in options.tools ? options.tools : createToolRegistry(options.tools as readonly Tool[]);
  const ownHost = options.mcp && !isMcpHost(options.mcp) ? createMcpHost(options.mcp) : undefined;
  const mcpHost = ownHost ?? (options.mcp as McpHost | undefined);
  // List the MCP servers once now, so the tools they have at start are registered by name (later ones run
  // through the fallback activity).
  await mcpHost?.refresh();
  const transcripts = withTranscriptEncryption(options.transcripts ?? new MemoryTranscriptStore(), encryption);
  const idempotencyStore = withIdempotencyEncryption(options.idempotencyStore, encryption);
  // The built-in pager of stored outputs reads the same store the tool activities write claim checks to.
  const registry = withReadStoredOutputTool(mcpHost ? withMcpTools(ownTools, mcpHost) : ownTools, transcripts);
  // The first connection instantiates Temporal's runtime: its default logger, then, writes no task token.
  if (!options.connection) installPrivateRuntimeIfNone();
  const ownConnection = options.connection ? undefined : await NativeConnection.connect(connectionOptions(settings));
  const connection = options.connection ?? ownConnection!;
  const telemetryOptions = await telemetryWorkerOptions(options.workerOptions, options.telemetry);
  const interceptors = telemetryOptions.interceptors ?? options.workerOptions?.interceptors;
  const modelActivities = createModelActivities({
    registry,
    providers: options.modelProviders ?? {},
    transcripts,
    ...(options.streams ? { streams: options.streams } : {}),
  });
  // One trail for the approval gate that writes decisions and the tool activities that check them.
  const auditStore = options.auditStore ?? new MemoryAuditStore();
  const toolActivities = createToolActivities({
    registry,
    auditStore,
    ...(options.approvals?.allowRunsToWaive !== undefined
      ? { allowRunsToWaive: options.approvals.allowRunsToWaive }
      : {}),
    ...(options.random ? { random: options.random } : {}),
    ...(idempotencyStore ? { idempotencyStore } : {}),
    ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
    ...(options.deadHolderDrainMs !== undefined ? { deadHolderDrainMs: options.deadHolderDrainMs } : {}),
    payloadStore: transcripts,
    argumentGuard,
    ...(options.streams ? { streams: options.streams } : {}),
    ...telemetryActivityDeps(options.telemetry),
  });
  const recordedTurns = createRecordedModelActivities({
    callModel: modelActivities.callModel,
    ...(idempotencyStore ? { store: idempotencyStore } : {}),
  });
  const dataConverter = encryptedDataConverter(encryption, options.workerOptions?.dataConverter);
  const workflowCode = await workflowCodeOption(options, interceptors?.workflowModules, dataConverter);
  // Temporal's Worker with the engine's sandbox and workflow threads (engine-worker.ts).
  const WorkerClass = options.workflowStackTraces === true ? EngineWorkerWithStackTraces : EngineWorker;
  const worker = await WorkerClass.create({
    ...tunedWorkerOptions(),
    ...options.workerOptions,
    ...telemetryOptions,
    // First, so no activity log line carries the task token, whatever the other interceptors add.
    interceptors: {
      ...interceptors,
      // A bundle built here already holds the workflow interceptor modules (the Worker would warn about them).
      ...('workflowBundle' in workflowCode && !options.workflowBundle ? { workflowModules: [] } : {}),
      activity: [withoutTaskTokenInActivityLogs, ...(interceptors?.activity ?? [])],
    },
    connection,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    dataConverter,
    ...workflowCode,
    activities: {
      ...toolActivities,
      ...createApprovalActivities({
        registry,
        ...options.approvals,
        auditStore,
        argumentGuard,
        ...telemetryActivityDeps(options.telemetry),
      }),
      ...modelActivities,
      // The fast path's model turn: recorded under its key in the idempotency store (docs/fast-path.md).
      ...recordedTurns,
      // The fused step: the recorded turn, then the calls it pre-cleared, through the tool activities above.
      ...createFusedStepActivities({
        callModelOnce: recordedTurns.callModelOnce,
        tools: toolActivities,
        plan: planFusedCalls,
        chain: planChainedTurn,
        // The first fused step reads the catalog itself and clears it as the workflow would.
        describeTools: () => toolActivities.describeTools(),
        clear: clearCatalog,
      }),
    },
  }).catch(async (error: unknown) => {
    await ownHost?.close();
    throw error;
  });
  return {
    worker,
    close: async () => {
      await ownHost?.close();
      await ownConnection?.close();
    },
  };
}

/**
 * Where the worker's workflow code comes from: the caller's bundle, else the cached bundle of the engine's
 * workflows (with the workflow interceptor modules and converters it needs), else — with the cache off or
 * bundler options given — Temporal's bundling at start.
 */
async function workflowCodeOption(
  options: CreateWorkerOptions,
  workflowModules: readonly string[] | undefined,
  dataConverter: WorkerOptions['dataConverter'],
): Promise<Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath' | 'bundlerOptions'>> {
  if (options.workflowBundle) return { workflowBundle: options.workflowBundle };
  const workflowsPath = require.resolve('../workflows');
  // The engine's bundle options (engine-bundle-options.ts), unless the caller bundles.
  if (options.workerOptions?.bundlerOptions || options.workerOptions?.plugins) return { workflowsPath };
  const engine = engineBundleOptions();
  if (options.workflowBundleCache === false) return { workflowsPath, bundlerOptions: engine };
  const workflowBundle = await cachedWorkflowBundle({
    workflowsPath,
    ...engine,
    ...(workflowModules?.length ? { workflowInterceptorModules: workflowModules } : {}),
    ...(dataConverter?.payloadConverterPath ? { payloadConverterPath: dataConverter.payloadConverterPath } : {}),
    ...(dataConverter?.failureConverterPath ? { failureConverterPath: dataConverter.failureConverterPath } : {}),
    ...(options.workflowBundleCache?.dir ? { cacheDir: options.workflowBundleCache.dir } : {}),
  });
  return { workflowBundle };
}

function isMcpHost(value: McpServersConfigInput | McpHost): value is McpHost {
  return typeof (value as McpHost).refresh === 'function';
}

/** The environment variable naming the module a worker process loads its tools from. */
export const TOOLS_MODULE_ENV = 'DURABLE_TOOLS_TOOLS_MODULE';

/**
 * Loads the tools of a worker process from a module exporting `tools: Tool[]`. A relative path is resolved
 * from the working directory (`cwd`), like any path typed on a command line. A `.ts`, `.mts` or `.cts` module
 * is loaded with the tsx of the project (registered when it is not already); without one a
 * `ToolsModuleError` says what to install, at once.
 *
 * @example
 * ```ts
 * const tools = await loadToolsModule('./dist/tools.js');
 * ```
 */
export async function loadToolsModule(modulePath: string, cwd: string = process.cwd()): Promise<Tool[]> {
  const resolved = isAbsolute(modulePath) ? modulePath : resolve(cwd, modulePath);
  enableTypeScriptFor(resolved, cwd);
  let loaded: { tools?: unknown };
  try {
    loaded = (await import(resolved)) as { tools?: unknown };
  } catch (error) {
    throw new Error(`Could not load the tools module ${resolved}: ${error instanceof Error ? error.message : error}`, {
      cause: error,
    });
  }
  if (!Array.isArray(loaded.tools)) {
    throw new Error(`${resolved} must export "tools", an array of implemented tools.`);
  }
  return loaded.tools as Tool[];
}

/**
 * Runs a worker the way a worker process should: idempotency keys in the configured durable store
 * (SQLite in `.data/` by default, Postgres with `DURABLE_TOOLS_IDEMPOTENCY_STORE=postgres`) with its reaper,
 * transcripts in the configured store (`.data/transcripts.sqlite` by default, Postgres with
 * `DURABLE_TOOLS_TRANSCRIPT_STORE=postgres`) with a reaper of expired stored payloads, live streams of model turns
 * in the configured stream store (`.data/streams.sqlite` by default, `DURABLE_TOOLS_STREAM_STORE=postgres|memory|off`;
 * with payload encryption only when that variable is set), the approval audit trail in the configured store
 * (`.data/audit.sqlite` by default, Postgres with `DURABLE_TOOLS_AUDIT_STORE=postgres`), OpenTelemetry traces and
 * metrics as the standard `OTEL_*` variables ask (see `startTelemetryFromEnv`). Returns when `until` settles (the command line passes its
 * Ctrl-C / SIGTERM), after the worker has drained; without `until`, when the worker shuts down.
 * `workflowStackTraces` is {@link CreateWorkerOptions.workflowStackTraces} (the CLI's `--workflow-stack-traces`).
 */
export async function runWorkerProcess(options: {
  tools: Tool[];
  settings?: Partial<ConnectionSettings>;
  workflowStackTraces?: boolean;
  until?: Promise<unknown>;
  log?: (line: string) => void;
}): Promise<void> {
  const settings = { ...connectionSettingsFromEnv(), ...options.settings };
  const log = options.log ?? ((line: string) => console.log(line));
  // First: a configuration error then leaves nothing open.
  const modelProviders = await modelProvidersFromEnv();
  const encryption = encryptionKeysFromEnv();
  // OpenTelemetry as the OTEL_* variables ask (nothing loaded when they ask for nothing).
  const telemetry = await startTelemetryFromEnv();
  const transcripts = createTranscriptStore();
  // Model text streams in clear: with payload encryption only when the environment asks for a stream store.
  const streamConfig = encryption && !process.env[STREAM_STORE_ENV.store] ? undefined : streamStoreConfigFromEnv();
  const streams = streamConfig ? await openStreamStore(streamConfig) : undefined;
  const auditStore = createAuditStore();
  const idempotencyStore = createIdempotencyStore();
  const reaper = createIdempotencyReaper(idempotencyStore);
  const payloadReaper = createPayloadReaper(transcripts);
  try {
    const { worker, close } = await createWorker({
      tools: options.tools,
      idempotencyStore,
      transcripts,
      ...(streams ? { streams } : {}),
      auditStore,
      settings,
      modelProviders,
      encryption: encryption ?? false,
      ...(telemetry?.traces ? { telemetry: { tracing: true } } : {}),
      ...(options.workflowStackTraces === true ? { workflowStackTraces: true } : {}),
    });
    const models = ['scripted', ...Object.keys(modelProviders)].join(', ');
    log(
      `durable-tools worker: ${options.tools.length} tools, models ${models}, on task queue "${settings.taskQueue}" at ${settings.address} (namespace ${settings.namespace})` +
        `${encryption ? `, payloads encrypted with key "${encryption.current.id}"` : ''}` +
        `${options.workflowStackTraces === true ? ', workflow stack traces on' : ''}. Ctrl-C stops it.`,
    );
    try {
      await (options.until ? worker.runUntil(options.until) : worker.run());
    } finally {
      await close();
    }
  } finally {
    reaper.stop();
    payloadReaper.stop();
    await idempotencyStore.close();
    await transcripts.close();
    await streams?.close();
    await auditStore.close();
    await telemetry?.shutdown();
  }
}
