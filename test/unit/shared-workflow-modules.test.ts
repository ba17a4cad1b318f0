import { relative, resolve } from 'node:path';
import { sharedWorkflowModulePaths } from '../../src/runtime/shared-workflow-modules';
import { moduleStateOf, runtimeClosure } from '../support/module-graph';

/*
 * Every run of a worker shares these modules (src/runtime/shared-workflow-modules.ts): one that kept state, or
 * pulled in Temporal's per-run workflow API, would let one run see another's. Each is checked with everything it
 * imports at run time.
 */

const shared = sharedWorkflowModulePaths();
const src = resolve(__dirname, '..', '..', 'src');
const named = shared.map((path) => [relative(src, path), path] as const);

test('the engine shares some of its workflow modules', () => {
  expect(shared.length).toBeGreaterThan(0);
});

test.each(named)('%s is a module of the workflow bundle', (_name, path) => {
  expect(runtimeClosure(resolve(src, 'workflows', 'index.ts')).files).toContain(path);
});

test.each(named)('%s imports no package and no built-in, itself or through its imports', (_name, path) => {
  expect([...runtimeClosure(path).packages]).toEqual([]);
});

test.each(named)('%s holds no state and runs nothing at module level, nor do its imports', (_name, path) => {
  const state = [...runtimeClosure(path).files].flatMap((file) =>
    moduleStateOf(file).map((line) => `${relative(src, file)}: ${line}`),
  );
  expect(state).toEqual([]);
});

test('the rules see a module that keeps state', () => {
  const found = moduleStateOf(resolve(__dirname, '..', 'fixtures', 'modules', 'stateful-module.ts'));
  expect(found).toEqual([
    'let calls = 0;',
    'seen = new Map<string, number>()',
    'cache: Record<string, string> = {}',
    'EVERY = /x/g',
    'calls += 1;',
  ]);
});
