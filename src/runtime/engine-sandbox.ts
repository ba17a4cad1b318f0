import type { Logger } from '@temporalio/common';
import { Worker, type CompiledWorkerOptions, type WorkerPlugin } from '@temporalio/worker';
import { createRequire } from 'node:module';
import { Worker as NodeWorker } from 'node:worker_threads';

/*
 * The only module of durable-tools that reaches into the Temporal SDK's private files (`@temporalio/worker/lib/...`);
 * test/unit/sdk-private-files.test.ts counts them. It is loaded only when a worker asks for the engine's sandbox
 * (`durableTools({ engineSandbox: true })`, the default of `createWorker` and the CLI), and whenever the SDK's
 * internals are not what it expects it leaves the worker on the SDK's own path, with a warning.
 */

/** The tuned `isolateExecutionTimeout` in ms: the largest Node accepts, the deadlock detector off. */
export const DEADLOCK_DETECTOR_OFF_MS = 2 ** 32 - 1;

/** How a plugin tells the patched workflow creator that its worker runs in the engine's sandbox. */
export const ENGINE_SANDBOX = Symbol.for('durable-tools.engineSandbox');

/** What a plugin that asks for the engine's sandbox carries (under {@link ENGINE_SANDBOX}). */
export interface EngineSandboxRequest {
  /** Whether the workflow threads keep the SDK's per-promise stack traces (the `__stack_trace` query). */
  workflowStackTraces: boolean;
}

/** Loads a module of `@temporalio/worker` by its path inside the package (`./workflow/threaded-vm`), or resolves it. */
export interface SdkModuleLoader {
  load(request: string): unknown;
  resolve(request: string): string;
}

/** The SDK's own modules, resolved from `@temporalio/worker` (the very files its worker loads). */
function sdkModules(): SdkModuleLoader {
  const fromTemporalWorker = createRequire(require.resolve('@temporalio/worker'));
  return { load: (request) => fromTemporalWorker(request), resolve: (request) => fromTemporalWorker.resolve(request) };
}

type CreateWorkflowCreator = (bundle: unknown, options: CompiledWorkerOptions, logger: Logger) => Promise<unknown>;

interface ThreadedVm {
  ThreadedVMWorkflowCreator: (new (clients: unknown[]) => unknown) & { create: (...args: unknown[]) => unknown };
  WorkerThreadClient: new (
    thread: NodeWorker,
    logger: Logger,
    patchActivationCallback?: unknown,
  ) => {
    send(message: unknown): Promise<unknown>;
  };
}

/** The SDK internals the engine's workflow threads need, found as expected. */
export interface SdkThreadInternals {
  threadedVm: ThreadedVm;
  vmSharedPath: string;
  threadPath: string;
}

/** The fields of the `init` message the engine's threads are started with (as the SDK's own 1.24 does). */
const THREAD_INIT_FIELDS = [
  'workflowBundle',
  'isolateExecutionTimeoutMs',
  'reuseV8Context',
  'registeredActivityNames',
  'hasPatchActivationCallback',
] as const;

/**
 * The fields of the `init` message the SDK's `ThreadedVMWorkflowCreator.create` sends, read from its source, or
 * undefined when that source does not start threads from `./workflow-worker-thread` with such a message.
 */
export function sdkThreadInitFields(createSource: string): string[] | undefined {
  if (!createSource.includes("require.resolve('./workflow-worker-thread')")) return undefined;
  const message = /type:\s*'init',([\s\S]*?)\}\)/.exec(createSource);
  if (!message) return undefined;
  return [...message[1]!.matchAll(/^\s*(\w+)\s*[,:]/gm)].map((match) => match[1]!);
}

/**
 * The SDK internals of the engine's workflow threads, or why they cannot be used: the threaded creator and its
 * thread client, the thread script, and the shared handlers' `setPromiseHook` the thread replaces. The SDK's
 * `create` must send no `init` field the engine's copy does not.
 */
export function findSdkThreadInternals(loader: SdkModuleLoader = sdkModules()): SdkThreadInternals | string {
  try {
    const threadedVm = loader.load('./workflow/threaded-vm') as Partial<ThreadedVm> | undefined;
    const creator = threadedVm?.ThreadedVMWorkflowCreator;
    if (typeof creator?.create !== 'function' || typeof threadedVm?.WorkerThreadClient !== 'function') {
      return 'lib/workflow/threaded-vm no longer exports ThreadedVMWorkflowCreator and WorkerThreadClient';
    }
    const fields = sdkThreadInitFields(String(creator.create));
    const unknown = fields?.filter((field) => !(THREAD_INIT_FIELDS as readonly string[]).includes(field));
    if (!fields || unknown!.length > 0) {
      return `ThreadedVMWorkflowCreator.create starts its threads otherwise now${unknown?.length ? ` (${unknown.join(', ')})` : ''}`;
    }
    const vmShared = loader.load('./workflow/vm-shared') as { GlobalHandlers?: { prototype?: object } } | undefined;
    const prototype = vmShared?.GlobalHandlers?.prototype as { setPromiseHook?: unknown } | undefined;
    if (typeof prototype?.setPromiseHook !== 'function') {
      return 'lib/workflow/vm-shared no longer has GlobalHandlers.setPromiseHook';
    }
    return {
      threadedVm: threadedVm as ThreadedVm,
      vmSharedPath: loader.resolve('./workflow/vm-shared'),
      threadPath: loader.resolve('./workflow/workflow-worker-thread'),
    };
  } catch (error) {
    return `the SDK's workflow thread modules could not be loaded (${error instanceof Error ? error.message : error})`;
  }
}

/**
 * The script each workflow thread starts with: the SDK's thread, after its shared sandbox handlers are told to
 * install no promise hook. The SDK's hook captures and formats a stack trace for every promise a workflow
 * creates, for the `__stack_trace` query only (~12% of a 10-step fast-path run, docs/benchmarks.md, "Stack traces
 * of workflow promises"); without it the SDK's sandbox says so itself (the query answers "Workflow stack traces
 * are not enabled on this worker"). Error stack traces keep their source map. A thread whose handlers have no
 * such method keeps the SDK's hook (never an error).
 */
export function workflowThreadScript(internals: Pick<SdkThreadInternals, 'vmSharedPath' | 'threadPath'>): string {
  return [
    `const { globalHandlers } = require(${JSON.stringify(internals.vmSharedPath)});`,
    "if (typeof globalHandlers?.setPromiseHook === 'function') {",
    '  globalHandlers.setPromiseHook = function setNoPromiseHook() {};',
    '}',
    `require(${JSON.stringify(internals.threadPath)});`,
  ].join('\n');
}

/**
 * The compiled worker options the sandbox is created with: with the deadlock detector off (an
 * `isolateExecutionTimeout` of {@link DEADLOCK_DETECTOR_OFF_MS}), no timeout at all. The SDK enters the sandbox
 * with `vm.runInContext(..., { timeout })` several times per activation and Node starts a watchdog thread for
 * each call with a timeout: ~75 µs each against ~4 µs without (docs/benchmarks.md). A timeout of ~49.7 days
 * detects nothing, so it is left out; a shorter one (the detector brought back) is kept.
 */
export function sandboxOptions(options: CompiledWorkerOptions): CompiledWorkerOptions {
  if (options.isolateExecutionTimeoutMs < DEADLOCK_DETECTOR_OFF_MS) return options;
  return { ...options, isolateExecutionTimeoutMs: undefined as unknown as number };
}

/** The SDK's threaded workflow creator (`ThreadedVMWorkflowCreator.create`), each thread started from our script. */
async function createEngineThreads(
  internals: SdkThreadInternals,
  workflowBundle: unknown,
  options: CompiledWorkerOptions,
  logger: Logger,
): Promise<unknown> {
  const { ThreadedVMWorkflowCreator, WorkerThreadClient } = internals.threadedVm;
  const script = workflowThreadScript(internals);
  const patchActivationCallback = (options as { patchActivationCallback?: unknown }).patchActivationCallback;
  const clients = Array.from(
    { length: options.workflowThreadPoolSize },
    () => new WorkerThreadClient(new NodeWorker(script, { eval: true }), logger, patchActivationCallback),
  );
  await Promise.all(
    clients.map((client) =>
      client.send({
        type: 'init',
        workflowBundle,
        isolateExecutionTimeoutMs: options.isolateExecutionTimeoutMs,
        reuseV8Context: options.reuseV8Context ?? true,
        registeredActivityNames: new Set(options.activities.keys()),
        hasPatchActivationCallback: patchActivationCallback !== undefined,
      }),
    ),
  );
  return new ThreadedVMWorkflowCreator(clients);
}

/** The engine-sandbox request of a worker's plugins, if one of them makes it. */
function sandboxRequestOf(options: CompiledWorkerOptions): EngineSandboxRequest | undefined {
  const plugins = (options as { plugins?: readonly WorkerPlugin[] }).plugins ?? [];
  for (const plugin of plugins) {
    const request = (plugin as { [ENGINE_SANDBOX]?: EngineSandboxRequest })[ENGINE_SANDBOX];
    if (request) return request;
  }
  return undefined;
}

/** Options of {@link installEngineSandbox}. */
export interface EngineSandboxOptions {
  /** Where the warning goes when the SDK's internals are not as expected (default `console.warn`). */
  warn?: (message: string) => void;
  /** Loads the SDK's modules (tests inject one). */
  loader?: SdkModuleLoader;
  /** The Worker class whose workflow creator is wrapped (default Temporal's). */
  workerClass?: object;
}

const INSTALLED = Symbol.for('durable-tools.engineSandboxInstalled');

/**
 * Wraps the SDK Worker's workflow creator (its protected static `createWorkflowCreator`) once per process so
 * that a worker whose plugins ask for the engine's sandbox ({@link ENGINE_SANDBOX}) gets the sandbox without the
 * vm watchdog ({@link sandboxOptions}) and, unless it keeps stack traces, the engine's workflow threads. Every
 * other worker, and `debugMode`, goes the SDK's own way. When the SDK's internals are not as expected nothing is
 * wrapped, or the worker falls back to the SDK's threads, with a warning: a worker always starts. Returns
 * whether the wrapper is in place.
 */
export function installEngineSandbox(options: EngineSandboxOptions = {}): boolean {
  const warn = options.warn ?? ((message: string) => console.warn(message));
  const target = (options.workerClass ?? Worker) as {
    createWorkflowCreator?: CreateWorkflowCreator;
    [INSTALLED]?: boolean;
  };
  if (target[INSTALLED]) return true;
  const original = target.createWorkflowCreator;
  if (typeof original !== 'function') {
    warn(
      "durable-tools: @temporalio/worker's Worker has no createWorkflowCreator any more; the engine's sandbox is off, workers use the SDK's (deadlock detector settings still apply).",
    );
    return false;
  }
  let internals: SdkThreadInternals | string | undefined;
  const wrapped: CreateWorkflowCreator = async function (this: unknown, bundle, compiled, logger) {
    const request = sandboxRequestOf(compiled);
    if (!request) return await original.call(this, bundle, compiled, logger);
    const sandboxed = sandboxOptions(compiled);
    if (sandboxed.debugMode || request.workflowStackTraces) return await original.call(this, bundle, sandboxed, logger);
    internals ??= findSdkThreadInternals(options.loader);
    if (typeof internals === 'string') {
      warn(
        `durable-tools: ${internals}; this worker uses the SDK's own workflow threads (with per-promise stack traces).`,
      );
      return await original.call(this, bundle, sandboxed, logger);
    }
    return await createEngineThreads(internals, bundle, sandboxed, logger);
  };
  target.createWorkflowCreator = wrapped;
  target[INSTALLED] = true;
  return true;
}
