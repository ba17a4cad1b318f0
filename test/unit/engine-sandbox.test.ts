import type { CompiledWorkerOptions } from '@temporalio/worker';
import {
  DEADLOCK_DETECTOR_OFF_MS,
  ENGINE_SANDBOX,
  findSdkThreadInternals,
  installEngineSandbox,
  sdkThreadInitFields,
  workflowThreadScript,
  type SdkModuleLoader,
} from '../../src/runtime/engine-sandbox';

/*
 * The engine's sandbox (src/runtime/engine-sandbox.ts) is the one module that uses private files of
 * @temporalio/worker. These pin what it expects of the installed SDK, and show that any other SDK leaves the
 * worker on the SDK's own path, with a warning, instead of a worker that does not start.
 */

/** A loader of the SDK's modules answering `modules[request]` (and resolving to a fake path). */
function loaderOf(modules: Record<string, unknown>): SdkModuleLoader {
  return {
    load: (request) => {
      if (!(request in modules)) throw new Error(`Cannot find module '${request}'`);
      return modules[request];
    },
    resolve: (request) => `/sdk/lib/${request.slice(2)}.js`,
  };
}

/** A fake Worker class whose own workflow creator records the options it was called with. */
function fakeWorkerClass() {
  const calls: CompiledWorkerOptions[] = [];
  const workerClass = {
    createWorkflowCreator: async (_bundle: unknown, options: CompiledWorkerOptions) => {
      calls.push(options);
      return 'sdk-creator';
    },
  };
  const create = (options: Partial<CompiledWorkerOptions> & { plugins?: object[] }) =>
    (workerClass.createWorkflowCreator as (...args: unknown[]) => Promise<unknown>).call(workerClass, {}, options, {});
  return { workerClass, calls, create };
}

const sandboxPlugin = { name: 'durable-tools', [ENGINE_SANDBOX]: { workflowStackTraces: false } };

test('the installed SDK has the internals the engine sandbox expects', () => {
  const internals = findSdkThreadInternals();

  expect(typeof internals).toBe('object');
  expect(typeof internals === 'object' && internals.threadPath).toMatch(/workflow-worker-thread\.js$/);
});

test("the SDK's thread init fields are read from its creator's source", () => {
  const source = `static async create({ threadPoolSize }) {
    const c = new WorkerThreadClient(new Worker(require.resolve('./workflow-worker-thread')));
    await client.send({
      type: 'init',
      workflowBundle,
      isolateExecutionTimeoutMs,
      newField: compute(),
    });
  }`;

  expect(sdkThreadInitFields(source)).toEqual(['workflowBundle', 'isolateExecutionTimeoutMs', 'newField']);
  expect(sdkThreadInitFields('static async create() {}')).toBeUndefined();
});

test('an SDK whose thread modules are missing is reported, not thrown', () => {
  expect(findSdkThreadInternals(loaderOf({}))).toMatch(/could not be loaded/);
});

test('an SDK whose creator sends an init field the engine does not know is reported', () => {
  const source = `send(new Worker(require.resolve('./workflow-worker-thread')), { type: 'init',
      workflowBundle,
      sandboxFlags,
    })`;
  const threadedVm = {
    ThreadedVMWorkflowCreator: { create: Object.assign(() => undefined, { toString: () => source }) },
    WorkerThreadClient: function WorkerThreadClient() {},
  };

  expect(findSdkThreadInternals(loaderOf({ './workflow/threaded-vm': threadedVm }))).toMatch(/sandboxFlags/);
});

test("a worker that asks for the engine's sandbox falls back to the SDK's threads, with a warning, when the internals changed", async () => {
  const { workerClass, calls, create } = fakeWorkerClass();
  const warnings: string[] = [];

  installEngineSandbox({ workerClass, loader: loaderOf({}), warn: (line) => warnings.push(line) });
  const creator = await create({
    plugins: [sandboxPlugin],
    isolateExecutionTimeoutMs: DEADLOCK_DETECTOR_OFF_MS,
    debugMode: false,
  });

  expect(creator).toBe('sdk-creator');
  expect(warnings).toEqual([expect.stringMatching(/uses the SDK's own workflow threads/)]);
  // The deadlock detector stays off, without the vm watchdog.
  expect(calls[0]?.isolateExecutionTimeoutMs).toBeUndefined();
});

test('a worker that does not ask for the engine sandbox goes the SDK way, its options untouched', async () => {
  const { workerClass, calls, create } = fakeWorkerClass();
  const warnings: string[] = [];
  installEngineSandbox({ workerClass, loader: loaderOf({}), warn: (line) => warnings.push(line) });

  const options = { plugins: [{ name: 'other' }], isolateExecutionTimeoutMs: 5_000 };
  await create(options);

  expect(calls).toEqual([options]);
  expect(warnings).toEqual([]);
});

test('a Worker without a workflow creator to wrap leaves every worker as it is, with a warning', () => {
  const warnings: string[] = [];

  expect(installEngineSandbox({ workerClass: {}, warn: (line) => warnings.push(line) })).toBe(false);
  expect(warnings).toEqual([expect.stringMatching(/no createWorkflowCreator/)]);
});

/** Runs the thread script with `require` answering `vmShared` for the shared module and `{}` for the rest. */
function runThreadScript(vmShared: unknown): string[] {
  const loaded: string[] = [];
  const fakeRequire = (path: string) => {
    loaded.push(path);
    return path.endsWith('vm-shared.js') ? vmShared : {};
  };
  const script = workflowThreadScript({
    vmSharedPath: '/sdk/vm-shared.js',
    threadPath: '/sdk/workflow-worker-thread.js',
  });
  new Function('require', script)(fakeRequire);
  return loaded;
}

test("the thread script replaces the handlers' promise hook before it loads the SDK's thread", () => {
  let installed = 0;
  const handlers = { setPromiseHook: () => (installed += 1) };

  const loaded = runThreadScript({ globalHandlers: handlers });
  handlers.setPromiseHook();

  expect(installed).toBe(0);
  expect(loaded).toEqual(['/sdk/vm-shared.js', '/sdk/workflow-worker-thread.js']);
});

test('a thread of an SDK without that method starts as the SDK made it', () => {
  expect(runThreadScript({ globalHandlers: {} })).toEqual(['/sdk/vm-shared.js', '/sdk/workflow-worker-thread.js']);
  expect(runThreadScript({})).toHaveLength(2);
});
