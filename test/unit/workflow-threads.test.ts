import { existsSync } from 'node:fs';
import { globalHandlers } from '@temporalio/worker/lib/workflow/vm-shared';
import { workflowThreadScript } from '../../src/runtime/workflow-threads';

/*
 * createWorker's workflow threads start from the SDK's own thread script, after its shared handlers are told to
 * install no promise hook (src/runtime/workflow-threads.ts). These pin what that relies on in the SDK.
 */

test('the thread script requires the SDK files the worker itself loads', () => {
  const required = [...workflowThreadScript().matchAll(/require\("([^"]+)"\)/g)].map((match) => match[1]!);

  expect(required).toHaveLength(2);
  expect(required[0]).toMatch(/@temporalio\/worker\/lib\/workflow\/vm-shared\.js$/);
  expect(required[1]).toMatch(/@temporalio\/worker\/lib\/workflow\/workflow-worker-thread\.js$/);
  for (const path of required) expect(existsSync(path)).toBe(true);
});

test("the SDK's shared handlers install their promise hook through the method the script replaces", () => {
  expect(typeof (globalHandlers as unknown as { setPromiseHook: unknown }).setPromiseHook).toBe('function');
  expect(String(globalHandlers.install)).toContain('this.setPromiseHook()');
});

/** Runs the thread script with `require` answering `vmShared` for the SDK's shared module and `{}` for the rest. */
function runThreadScript(vmShared: unknown): string[] {
  const loaded: string[] = [];
  const fakeRequire = (path: string) => {
    loaded.push(path);
    return path.endsWith('vm-shared.js') ? vmShared : {};
  };
  new Function('require', workflowThreadScript())(fakeRequire);
  return loaded;
}

test("the script replaces the handlers' promise hook before it loads the SDK's thread", () => {
  let installed = 0;
  const handlers = { setPromiseHook: () => (installed += 1) };

  const loaded = runThreadScript({ globalHandlers: handlers });
  handlers.setPromiseHook();

  expect(installed).toBe(0);
  expect(loaded.map((path) => path.split('/').pop())).toEqual(['vm-shared.js', 'workflow-worker-thread.js']);
});

test('a thread of an SDK without that method stops with an error that names the way out', () => {
  expect(() => runThreadScript({ globalHandlers: {} })).toThrow(/workflowStackTraces: true/);
  expect(() => runThreadScript({})).toThrow(/no longer has globalHandlers\.setPromiseHook/);
});
