import { isAbsolute, resolve } from 'node:path';
import { enableTypeScriptFor } from './typescript-tools-module';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { connectionOptions, connectionSettingsFromEnv, type ConnectionSettings } from '../client/connection-settings';
import type { Tool } from '../tools/define-tool';
import type { AgentDefinition } from '../agents/define-agent';
import { openStreamStore, STREAM_STORE_ENV, streamStoreConfigFromEnv } from '../stores/streams/open-stream-store';
import { modelProvidersFromEnv } from '../model/configured-model-providers';
import type { McpServersConfigInput } from '../mcp/client/mcp-config';
import { tunedWorkerOptions, type DeadlockTimeoutOption } from './worker-tuning';
import { cachedWorkflowBundle } from './workflow-bundle-cache';
import { engineBundleOptions } from './engine-bundle-options';
import { engineWorkflowsPath } from './engine-workflows-module';
import { installPrivateRuntimeIfNone } from '../telemetry/private-runtime';
import { TRACING_WORKFLOW_MODULES } from '../telemetry/tracing-workflow-modules';
import { encryptionKeysFromEnv } from '../encryption/encryption-keys';
import { startTelemetryFromEnv } from '../telemetry/telemetry-from-env';
import { durableTools, type DurableToolsOptions, type DurableToolsPlugin } from './durable-tools-plugin';

/**
 * Options of {@link createWorker}: the plugin's ({@link DurableToolsOptions}: tools, MCP servers, stores — durable
 * by default, `stores: 'memory'` for tests —, models, encryption, approvals, telemetry, ...) and the worker's.
 */
export interface CreateWorkerOptions extends Omit<DurableToolsOptions, 'engineSandbox'> {
  /** Connection settings (default: from the environment). */
  settings?: Partial<ConnectionSettings>;
  /** An existing connection; the caller closes it. */
  connection?: NativeConnection;
  /** A pre-built workflow bundle of the engine's workflows (tests and benchmarks build it once). */
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
   * Anything else Temporal's Worker accepts (concurrency, shutdown grace, interceptors, plugins, ...). Cache and
   * concurrency default to `tunedWorkerOptions()` (sized for many concurrent runs); these override them.
   * `isolateExecutionTimeout` (the SDK's workflow deadlock detector) is off by default because a pause of
   * the process during a workflow activation made it kill the worker (docs/pauses.md); set it to bring the
   * detector back.
   */
  workerOptions?: Partial<Omit<WorkerOptions, 'connection' | 'activities' | 'workflowsPath' | 'workflowBundle'>> &
    DeadlockTimeoutOption;
}

/** A created worker and what it owns. */
export interface DurableToolsWorker {
  worker: Worker;
  /**
   * Closes the connection if this function opened it, and what the plugin opened (stores, MCP connections) if the
   * worker never ran (a run closes those when it ends). Call after `worker.run()` resolves.
   */
  close(): Promise<void>;
}

/**
 * Creates a Temporal worker that runs the engine's workflows (`agentRun`, `mcpToolCall`) and one activity per
 * tool (activity type = tool name), plus the engine's `describeTools`, model and approval activities and the
 * built-in read-only tool `read_stored_output`: Temporal's Worker with the {@link durableTools} plugin, the
 * engine's sandbox (`engineSandbox`), tuned cache and concurrency, and a cached workflow bundle. Stores are
 * durable unless asked otherwise: SQLite in `.data/` (or what `DURABLE_TOOLS_*_STORE` configures), closed when
 * the worker's run ends.
 *
 * @example
 * ```ts
 * const { worker, close } = await createWorker({ tools: [searchFlights, bookFlight, cancelFlight] });
 * await worker.run(); // until SIGINT / SIGTERM
 * await close();
 * ```
 */
export async function createWorker(options: CreateWorkerOptions): Promise<DurableToolsWorker> {
  const {
    settings: givenSettings,
    connection: givenConnection,
    workflowBundle: _bundle,
    workflowBundleCache: _cache,
    workerOptions,
    ...pluginOptions
  } = options;
  const settings = { ...connectionSettingsFromEnv(), ...givenSettings };
  const plugin = durableTools({ ...pluginOptions, engineSandbox: true });
  // The first connection instantiates Temporal's runtime: its default logger, then, writes no task token.
  if (!givenConnection) installPrivateRuntimeIfNone();
  let ownConnection: NativeConnection | undefined;
  try {
    ownConnection = givenConnection ? undefined : await NativeConnection.connect(connectionOptions(settings));
    const workflowCode = await workflowCodeOption(options);
    const worker = await Worker.create({
      ...tunedWorkerOptions(),
      ...workerOptions,
      ...workflowCode.options,
      plugins: [...(workerOptions?.plugins ?? []), plugin],
      connection: givenConnection ?? ownConnection!,
      namespace: settings.namespace,
      taskQueue: settings.taskQueue,
    });
    return { worker, close: () => closeWorker(plugin, ownConnection) };
  } catch (error) {
    await closeWorker(plugin, ownConnection);
    throw error;
  }
}

async function closeWorker(plugin: DurableToolsPlugin, connection: NativeConnection | undefined): Promise<void> {
  try {
    await plugin.close();
  } finally {
    await connection?.close();
  }
}

/**
 * Where the worker's workflow code comes from: the caller's bundle, else the cached bundle of the engine's
 * workflows (with the workflow interceptor modules and converters it needs), else — with the cache off or
 * bundler options or plugins of the caller given — Temporal's bundling at start.
 */
async function workflowCodeOption(options: CreateWorkerOptions): Promise<{ options: Partial<WorkerOptions> }> {
  if (options.workflowBundle) return { options: { workflowBundle: options.workflowBundle } };
  const workflowsPath = engineWorkflowsPath();
  if (options.workerOptions?.bundlerOptions || options.workerOptions?.plugins) return { options: { workflowsPath } };
  const engine = engineBundleOptions();
  if (options.workflowBundleCache === false) return { options: { workflowsPath, bundlerOptions: engine } };
  const interceptors = options.workerOptions?.interceptors;
  const workflowModules = [
    ...(interceptors?.workflowModules ?? []),
    ...(options.telemetry?.tracing ? TRACING_WORKFLOW_MODULES : []),
  ];
  const dataConverter = options.workerOptions?.dataConverter;
  const workflowBundle = await cachedWorkflowBundle({
    workflowsPath,
    ...engine,
    ...(workflowModules.length ? { workflowInterceptorModules: workflowModules } : {}),
    ...(dataConverter?.payloadConverterPath ? { payloadConverterPath: dataConverter.payloadConverterPath } : {}),
    ...(dataConverter?.failureConverterPath ? { failureConverterPath: dataConverter.failureConverterPath } : {}),
    ...(options.workflowBundleCache?.dir ? { cacheDir: options.workflowBundleCache.dir } : {}),
  });
  // The bundle holds the workflow interceptor modules already (the Worker would warn about them).
  return { options: { workflowBundle, interceptors: { ...interceptors, workflowModules: [] } } };
}

/** The environment variable naming the module a worker process loads its tools from. */
export const TOOLS_MODULE_ENV = 'DURABLE_TOOLS_TOOLS_MODULE';

/** What a worker process loads from its tools module: its tools, and the MCP servers it names, if any. */
export interface ToolsModuleExports {
  tools: Tool[];
  /** The module's `mcp` export: `{ mcpServers: ... }` whose tools the worker also runs. */
  mcp?: McpServersConfigInput;
  /** The module's `agents` export: agents made by `defineAgent` (`durable-tools mcp` serves them as tools). */
  agents?: AgentDefinition[];
}

/**
 * Loads the tools of a worker process from a module exporting `tools: Tool[]` (and optionally `mcp`, a
 * `{ mcpServers: ... }` configuration whose servers' tools the worker also runs). A relative path is resolved
 * from the working directory (`cwd`), like any path typed on a command line. A `.ts`, `.mts` or `.cts` module
 * is loaded with the tsx of the project (registered when it is not already); without one a
 * `ToolsModuleError` says what to install, at once.
 *
 * @example
 * ```ts
 * const { tools, mcp } = await loadToolsModuleExports('./dist/tools.js');
 * ```
 */
export async function loadToolsModuleExports(
  modulePath: string,
  cwd: string = process.cwd(),
): Promise<ToolsModuleExports> {
  const resolved = isAbsolute(modulePath) ? modulePath : resolve(cwd, modulePath);
  enableTypeScriptFor(resolved, cwd);
  let loaded: { tools?: unknown; mcp?: unknown; agents?: unknown };
  try {
    loaded = (await import(resolved)) as { tools?: unknown; mcp?: unknown; agents?: unknown };
  } catch (error) {
    throw new Error(`Could not load the tools module ${resolved}: ${error instanceof Error ? error.message : error}`, {
      cause: error,
    });
  }
  if (!Array.isArray(loaded.tools)) {
    throw new Error(`${resolved} must export "tools", an array of implemented tools.`);
  }
  if (loaded.mcp !== undefined && (typeof loaded.mcp !== 'object' || loaded.mcp === null)) {
    throw new Error(`${resolved} exports "mcp", which must be a { mcpServers: ... } configuration.`);
  }
  if (loaded.agents !== undefined && !isAgentList(loaded.agents)) {
    throw new Error(`${resolved} exports "agents", which must be an array of defineAgent(...) agents.`);
  }
  return {
    tools: loaded.tools as Tool[],
    ...(loaded.mcp !== undefined ? { mcp: loaded.mcp as McpServersConfigInput } : {}),
    ...(loaded.agents !== undefined ? { agents: loaded.agents } : {}),
  };
}

function isAgentList(value: unknown): value is AgentDefinition[] {
  return (
    Array.isArray(value) &&
    value.every((agent) => (agent as Partial<AgentDefinition> | undefined)?.kind === 'durable-tools.agent')
  );
}

/**
 * Loads the tools of a worker process from a module exporting `tools: Tool[]` (see {@link loadToolsModuleExports}).
 *
 * @example
 * ```ts
 * const tools = await loadToolsModule('./dist/tools.js');
 * ```
 */
export async function loadToolsModule(modulePath: string, cwd: string = process.cwd()): Promise<Tool[]> {
  return (await loadToolsModuleExports(modulePath, cwd)).tools;
}

/**
 * Runs a worker the way a worker process should: {@link createWorker} with its durable stores (idempotency keys,
 * transcripts and the approval audit trail in SQLite in `.data/` unless `DURABLE_TOOLS_IDEMPOTENCY_STORE`,
 * `DURABLE_TOOLS_TRANSCRIPT_STORE`, `DURABLE_TOOLS_AUDIT_STORE` say otherwise, with reapers of expired keys and
 * payloads), live streams of model turns in the configured stream store (`.data/streams.sqlite` by default,
 * `DURABLE_TOOLS_STREAM_STORE=postgres|memory|off`; with payload encryption only when that variable is set), model
 * providers, encryption keys and OpenTelemetry as the environment asks (see `startTelemetryFromEnv`), and the
 * tools of the MCP servers `mcp` configures. Returns when `until` settles (the command line passes its Ctrl-C /
 * SIGTERM), after the worker has drained; without `until`, when the worker shuts down. `workflowStackTraces` is
 * {@link CreateWorkerOptions.workflowStackTraces} (the CLI's `--workflow-stack-traces`).
 */
export async function runWorkerProcess(options: {
  tools: Tool[];
  mcp?: McpServersConfigInput;
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
  // Model text streams in clear: with payload encryption only when the environment asks for a stream store.
  const streamConfig = encryption && !process.env[STREAM_STORE_ENV.store] ? undefined : streamStoreConfigFromEnv();
  const streams = streamConfig ? await openStreamStore(streamConfig) : undefined;
  try {
    const { worker, close } = await createWorker({
      tools: options.tools,
      ...(options.mcp ? { mcp: options.mcp } : {}),
      ...(streams ? { streams } : {}),
      settings,
      modelProviders,
      encryption: encryption ?? false,
      ...(telemetry?.traces ? { telemetry: { tracing: true } } : {}),
      ...(options.workflowStackTraces === true ? { workflowStackTraces: true } : {}),
    });
    const models = ['scripted', ...Object.keys(modelProviders)].join(', ');
    const servers = Object.keys((options.mcp as { mcpServers?: object } | undefined)?.mcpServers ?? {});
    log(
      `durable-tools worker: ${options.tools.length} tools${servers.length ? ` and the tools of MCP servers ${servers.join(', ')}` : ''}, models ${models}, on task queue "${settings.taskQueue}" at ${settings.address} (namespace ${settings.namespace})` +
        `${encryption ? `, payloads encrypted with key "${encryption.current.id}"` : ''}` +
        `${options.workflowStackTraces === true ? ', workflow stack traces on' : ''}. Ctrl-C stops it.`,
    );
    try {
      await (options.until ? worker.runUntil(options.until) : worker.run());
    } finally {
      await close();
    }
  } finally {
    await streams?.close();
    await telemetry?.shutdown();
  }
}
