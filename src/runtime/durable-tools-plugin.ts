import type { DataConverter } from '@temporalio/common';
import type { WorkerAuthorityConfig } from '../activities/run-authority';
import { SimplePlugin } from '@temporalio/plugin';
import type {
  BundleOptions,
  BundlerPlugin,
  ReplayWorkerOptions,
  Worker,
  WorkerOptions,
  WorkerPlugin,
} from '@temporalio/worker';
import type { WorkerApprovalConfig } from '../activities/approval-activities';
import type { ModelProvider } from '../contract/model-types';
import { encryptedDataConverter } from '../encryption/encryption-codec';
import { withIdempotencyEncryption, withTranscriptEncryption } from '../encryption/encrypted-stores';
import { resolveEncryptionKeys, type EncryptionKeyring } from '../encryption/encryption-keys';
import { resolveArgumentGuard, type ArgumentGuardOptions } from '../guard/argument-guard-options';
import type { McpServersConfigInput } from '../mcp/client/mcp-config';
import { createMcpHost, withMcpTools, type McpHost } from '../mcp/client/mcp-host';
import type { StreamStore } from '../stores/streams/stream-store';
import { withoutTaskTokenInActivityLogs } from '../telemetry/private-logs';
import { TRACING_WORKFLOW_MODULES } from '../telemetry/tracing-workflow-modules';
import {
  telemetryTracerProvider,
  telemetryWorkerOptions,
  type WorkerTelemetryOptions,
} from '../telemetry/worker-telemetry';
import type { Tool } from '../tools/define-tool';
import { withReadStoredOutputTool } from '../tools/read-stored-output-tool';
import { createToolRegistry, type ToolRegistry } from '../tools/tool-registry';
import { createEngineActivities, type EngineActivities } from './engine-activities';
import { withEngineWorkflows } from './engine-workflows-module';
import { WORKER_TUNING, type DeadlockTimeoutOption } from './worker-tuning';
import { openWorkerStores } from './worker-stores';
import type { ToolLimitStore } from '../stores/limits/tool-limit-store';
import type { AuditStore } from '../stores/audit/audit-store';
import type { IdempotencyStore } from '../stores/idempotency/idempotency-store';
import type { TranscriptStore } from '../stores/transcripts/transcript-store';
import { WorkerPluginError } from './worker-plugin-error';

/** Options of {@link durableTools}. */
export interface DurableToolsOptions {
  /** The tools this worker runs: a list or a registry. */
  tools: readonly Tool[] | ToolRegistry;
  /**
   * Where the stores not given below come from: `'durable'` (the default) opens those the environment configures,
   * as `createIdempotencyStore()`, `createTranscriptStore()` and `createAuditStore()` do — SQLite files in `.data/`
   * unless `DURABLE_TOOLS_IDEMPOTENCY_STORE`, `DURABLE_TOOLS_TRANSCRIPT_STORE`, `DURABLE_TOOLS_AUDIT_STORE` (and
   * their paths and URLs) say otherwise —, with reapers of expired keys and payloads; `'memory'` keeps them in this
   * process (tests: a call retried after a crash may run again; the worker warns when it runs tools with effects
   * so). Stores the plugin opens close when the worker's run ends.
   */
  stores?: 'durable' | 'memory';
  /** Idempotency keys of calls with effects (and the fast path's recorded model turns). You close it. */
  idempotencyStore?: IdempotencyStore;
  /** Transcripts and claim checks (tool outputs above their budget). You close it. */
  transcripts?: TranscriptStore;
  /** The audit trail of gated calls (approval decisions, read by the tool activities too). You close it. */
  auditStore?: AuditStore;
  /**
   * Slots, rate windows and breakers of tools with limits (`concurrency`, `rateLimit`, `breaker`; docs/limits.md):
   * every worker of the task queue must share it. Default: `createToolLimitStore()` (tables next to the idempotency
   * keys: the SQLite file, or the Postgres database); a memory store with `stores: 'memory'`. You close it.
   */
  limitStore?: ToolLimitStore;
  /**
   * MCP servers whose tools this worker also runs, as `{ mcpServers: { name: {command, args, env, cwd} | {url,
   * headers} } }` (the plugin owns the connections and closes them when the worker's run ends), or a host you
   * manage. Their tools are named `${server}__${tool}`. The servers are listed when the worker is created; a tool
   * that appears later runs through the worker's fallback activity.
   */
  mcp?: McpServersConfigInput | McpHost;
  /** Extra model providers by name (`scripted` is built in). */
  modelProviders?: Record<string, ModelProvider>;
  /** Where model turns and tool progress are streamed live (see `openStreamStore`); none: nothing is streamed. */
  streams?: StreamStore;
  /** Approval settings of this worker (whether runs may waive a tool's approval). */
  approvals?: WorkerApprovalConfig;
  /**
   * What runs may call (docs/security.md, "Authority of a run"): the tools that need a grant (`restrictedTools`,
   * default none) and where grants are read (default: the audit store). A run with a grant calls only its tools.
   */
  authority?: WorkerAuthorityConfig;
  /** OpenTelemetry tracing and metrics (see docs/telemetry.md). */
  telemetry?: WorkerTelemetryOptions;
  /** Limits of the argument guard for this worker's tools (see `createWorker`). Checked at once. */
  argumentGuard?: ArgumentGuardOptions;
  /**
   * Payload encryption: the keys that encrypt every payload this worker writes to Temporal (a codec appended to
   * the worker's own data converter) and the results kept in the stores; `false` turns it off. Default:
   * `DURABLE_TOOLS_ENCRYPTION_KEYS` / `DURABLE_TOOLS_ENCRYPTION_KEYS_FILE` when set, else off.
   */
  encryption?: EncryptionKeyring | false;
  /** Uniform random source in [0, 1) for retry jitter (tests inject a seeded one). */
  random?: () => number;
  /** Lease of an idempotency key while a call runs (default 10 s). */
  leaseMs?: number;
  /** Drain after taking over a key from a holder proved dead (default 1 s); `false` waits for the lease. */
  deadHolderDrainMs?: number | false;
  /** Lease of a slot of a tool with limits (default 30 s): a dead worker's slot is free again after it. */
  slotLeaseMs?: number;
  /**
   * The engine's workflow sandbox, as `createWorker` and the CLI run it (default `false` here: the worker is
   * yours). `true`: the SDK's workflow deadlock detector off unless the worker sets `isolateExecutionTimeout` (a
   * process paused during an activation no longer kills the worker, docs/pauses.md; the cost: workflow code
   * stuck in a synchronous loop blocks its thread instead of failing its task), no vm watchdog per call into the
   * sandbox, and workflow threads without per-promise stack traces (~12% of a short fast-path run; the UI's
   * "Stack Trace" tab then says they are off). It relies on private files of `@temporalio/worker`; when they are
   * not as expected the worker starts on the SDK's own path with a warning. See docs/own-worker.md.
   */
  engineSandbox?: boolean;
  /** With `engineSandbox`, keep the SDK's per-promise stack traces (the `__stack_trace` query). Default `false`. */
  workflowStackTraces?: boolean;
  /** Where warnings go (default `console.warn`). */
  warn?: (message: string) => void;
}

/** The same symbol as engine-sandbox.ts's `ENGINE_SANDBOX`: how the sandbox knows a worker asked for it. */
const ENGINE_SANDBOX = Symbol.for('durable-tools.engineSandbox');

/** What the plugin opened for its worker, closed when the worker's run ends. */
interface OpenEngine {
  activities: EngineActivities;
  registry: ToolRegistry;
  tracing: Pick<WorkerOptions, 'interceptors' | 'sinks'>;
  close(): Promise<void>;
}

/**
 * The durable-tools plugin of a Temporal worker (built on `@temporalio/plugin`'s `SimplePlugin`); create it with
 * {@link durableTools}. One plugin serves one worker at a time: what it opens when the worker is created (stores,
 * MCP connections) closes when the worker's `run()` ends — or with {@link DurableToolsPlugin.close} for a worker
 * that is created but never run.
 */
export class DurableToolsPlugin implements WorkerPlugin, BundlerPlugin {
  readonly name = 'durable-tools';
  readonly #options: DurableToolsOptions;
  readonly #keyring: EncryptionKeyring | undefined;
  /** The parts that need nothing opened: workflows, converter, tracing modules (bundler and replay workers). */
  readonly #static: SimplePlugin;
  #engine: Promise<OpenEngine> | undefined;
  #running = 0;

  constructor(options: DurableToolsOptions) {
    resolveArgumentGuard(options.argumentGuard); // a bad limit throws now, before anything opens
    this.#options = options;
    this.#keyring = resolveEncryptionKeys(options.encryption);
    this.#static = new SimplePlugin({
      name: this.name,
      workflowsPath: (path) => withEngineWorkflows(path),
      ...this.#dataConverterOption(),
      ...(options.telemetry?.tracing ? { workerInterceptors: { workflowModules: [...TRACING_WORKFLOW_MODULES] } } : {}),
    });
    if (options.engineSandbox) {
      Object.defineProperty(this, ENGINE_SANDBOX, {
        value: { workflowStackTraces: options.workflowStackTraces === true },
      });
    }
  }

  /**
   * Adds the engine to a worker's options: its activities (an activity name the worker registers already is an
   * error), the task-token-free activity log interceptor first and the tracing ones, the encryption codec, and
   * the engine's workflows next to the worker's `workflowsPath` (a `workflowBundle` is used as it is: build it
   * with `bundleWorkflowCode({ workflowsPath, plugins: [plugin] })`). Opens the stores and MCP connections.
   */
  async configureWorker(options: WorkerOptions): Promise<WorkerOptions> {
    const engine = await (this.#engine ??= this.#open());
    try {
      return await this.#withEngine(options, engine);
    } catch (error) {
      // Nothing runs: what was opened for this worker closes now.
      await this.close();
      throw error;
    }
  }

  async #withEngine(options: WorkerOptions, engine: OpenEngine): Promise<WorkerOptions> {
    if (this.#options.engineSandbox) {
      const { installEngineSandbox } = await import('./engine-sandbox');
      installEngineSandbox({ warn: this.#warn });
    }
    const bundled = options.workflowBundle !== undefined;
    const configured = new SimplePlugin({
      name: this.name,
      activities: (existing) => withEngineActivities(existing, engine.activities),
      ...(bundled ? {} : { workflowsPath: (path: string | undefined) => withEngineWorkflows(path) }),
      ...this.#dataConverterOption(),
      workerInterceptors: (existing) => ({
        ...existing,
        // First, so no activity log line carries the task token, whatever the other interceptors add.
        activity: [
          withoutTaskTokenInActivityLogs,
          ...(existing?.activity ?? []),
          ...(engine.tracing.interceptors?.activity ?? []),
        ],
        // A bundle holds its workflow interceptor modules already (built with this plugin's `configureBundler`).
        workflowModules: [
          ...(existing?.workflowModules ?? []),
          ...(bundled ? [] : (engine.tracing.interceptors?.workflowModules ?? [])),
        ],
      }),
    }).configureWorker(options);
    return {
      ...configured,
      ...withEngineSinks(configured.sinks, engine.tracing.sinks),
      ...(this.#options.engineSandbox ? deadlockDetectorOff(options) : {}),
    };
  }

  /** A replay worker: the engine's workflows next to the worker's, the converter and the tracing modules. */
  configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    return this.#static.configureReplayWorker(options);
  }

  /** `bundleWorkflowCode({ plugins: [plugin] })`: the engine's workflows and interceptor modules in the bundle. */
  configureBundler(options: BundleOptions): BundleOptions {
    return this.#static.configureBundler(options);
  }

  /** Runs the worker; when its run ends, closes what the plugin opened for it. */
  async runWorker(worker: Worker, next: (w: Worker) => Promise<void>): Promise<void> {
    this.#running += 1;
    try {
      await next(worker);
    } finally {
      this.#running -= 1;
      if (this.#running === 0) await this.close();
    }
  }

  /** Closes what the plugin opened (stores it created, MCP connections it owns). Idempotent. */
  async close(): Promise<void> {
    const engine = this.#engine;
    this.#engine = undefined;
    await (await engine?.catch(() => undefined))?.close();
  }

  readonly #warn = (message: string): void => (this.#options.warn ?? ((line) => console.warn(line)))(message);

  #dataConverterOption(): { dataConverter?: (existing: DataConverter | undefined) => DataConverter } {
    const keyring = this.#keyring;
    if (!keyring) return {};
    return { dataConverter: (existing) => encryptedDataConverter(keyring, existing ?? {}) ?? {} };
  }

  async #open(): Promise<OpenEngine> {
    const options = this.#options;
    const argumentGuard = resolveArgumentGuard(options.argumentGuard);
    const stores = openWorkerStores(options);
    const ownHost = options.mcp && !isMcpHost(options.mcp) ? createMcpHost(options.mcp) : undefined;
    const mcpHost = ownHost ?? (options.mcp as McpHost | undefined);
    const close = async () => {
      await ownHost?.close();
      await stores.close();
    };
    try {
      // The servers' tools at start are registered by name; later ones run through the fallback activity.
      await mcpHost?.refresh();
      const ownTools =
        'catalog' in options.tools ? options.tools : createToolRegistry(options.tools as readonly Tool[]);
      const transcripts = withTranscriptEncryption(stores.transcripts, this.#keyring);
      const idempotencyStore = withIdempotencyEncryption(stores.idempotencyStore, this.#keyring);
      // The built-in pager of stored outputs reads the store the tool activities write claim checks to.
      const registry = withReadStoredOutputTool(mcpHost ? withMcpTools(ownTools, mcpHost) : ownTools, transcripts);
      if (stores.keysInMemory && hasToolsWithEffects(registry)) {
        this.#warn(
          'durable-tools: this worker runs tools with effects on memory stores: a call retried after a crash or on another worker may run again. Use the default durable stores (SQLite in .data/, or Postgres) outside tests.',
        );
      }
      const tracerProvider = await telemetryTracerProvider(options.telemetry);
      const activities = createEngineActivities({
        registry,
        modelProviders: options.modelProviders ?? {},
        idempotencyStore,
        transcripts,
        auditStore: stores.auditStore,
        limitStore: stores.limitStore,
        ...(options.slotLeaseMs !== undefined ? { slotLeaseMs: options.slotLeaseMs } : {}),
        argumentGuard,
        ...(options.streams ? { streams: options.streams } : {}),
        ...(options.approvals ? { approvals: options.approvals } : {}),
        ...(options.authority ? { authority: options.authority } : {}),
        ...(options.random ? { random: options.random } : {}),
        ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
        ...(options.deadHolderDrainMs !== undefined ? { deadHolderDrainMs: options.deadHolderDrainMs } : {}),
        ...(options.telemetry?.meterProvider ? { meterProvider: options.telemetry.meterProvider } : {}),
        ...(tracerProvider ? { tracerProvider } : {}),
      });
      const tracing = await telemetryWorkerOptions(undefined, options.telemetry);
      return { activities, registry, tracing, close };
    } catch (error) {
      this.#engine = undefined;
      await close();
      throw error;
    }
  }
}

/**
 * The durable-tools plugin for your own Temporal worker: the engine's activities (one per tool, the model and
 * approval ones), its workflows (`agentRun`, `mcpToolCall`) next to yours, the encryption codec and the
 * interceptors. Stores are durable by default (SQLite in `.data/`, or what `DURABLE_TOOLS_*_STORE` configures);
 * `stores: 'memory'` for tests. See docs/own-worker.md.
 *
 * @example
 * ```ts
 * const worker = await Worker.create({
 *   connection,
 *   taskQueue: 'bookings',
 *   workflowsPath: require.resolve('./workflows'),
 *   plugins: [durableTools({ tools: [searchFlights, bookFlight, cancelFlight] })],
 * });
 * await worker.run(); // the plugin's stores and MCP connections close when the run ends
 * ```
 */
export function durableTools(options: DurableToolsOptions): DurableToolsPlugin {
  return new DurableToolsPlugin(options);
}

function isMcpHost(value: McpServersConfigInput | McpHost): value is McpHost {
  return typeof (value as McpHost).refresh === 'function';
}

function hasToolsWithEffects(registry: ToolRegistry): boolean {
  return registry.list().some((tool) => tool.contract.catalogEntry.effect !== 'read-only');
}

/** The worker's activities and the engine's; a name taken by both is an error, never a silent override. */
function withEngineActivities(existing: object | undefined, engine: EngineActivities): object {
  const taken = Object.keys(engine).filter((name) => existing !== undefined && name in existing);
  if (taken.length > 0) {
    throw new WorkerPluginError(
      `The worker already registers activities the durable-tools plugin needs: ${taken.join(', ')}. Rename yours (tool names are activity types).`,
      'ACTIVITY_NAME_TAKEN',
    );
  }
  return { ...existing, ...engine };
}

/** The worker's sinks and the engine's tracing exporter; a sink of the same name is an error. */
function withEngineSinks(
  existing: WorkerOptions['sinks'],
  engine: WorkerOptions['sinks'],
): Pick<WorkerOptions, 'sinks'> {
  if (!engine) return existing ? { sinks: existing } : {};
  const taken = Object.keys(engine).filter((name) => existing !== undefined && name in existing);
  if (taken.length > 0) {
    throw new WorkerPluginError(
      `The worker already has sinks the durable-tools plugin's tracing needs: ${taken.join(', ')}.`,
      'SINK_NAME_TAKEN',
    );
  }
  return { sinks: { ...existing, ...engine } };
}

/** The deadlock detector off, unless the worker sets `isolateExecutionTimeout` itself. */
function deadlockDetectorOff(options: WorkerOptions): DeadlockTimeoutOption {
  const own = (options as DeadlockTimeoutOption).isolateExecutionTimeout;
  return { isolateExecutionTimeout: own ?? WORKER_TUNING.isolateExecutionTimeout };
}
