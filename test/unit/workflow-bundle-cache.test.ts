import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sandboxGlobalsBanner, withSandboxGlobals } from '../../src/runtime/sandbox-globals';
import { cachedWorkflowBundle, workflowBundleKey } from '../../src/runtime/workflow-bundle-cache';

/**
 * A package with a workflows module and a module it imports, in a directory of its own: under the system's
 * temporary directory, or `within` a directory whose `node_modules` webpack finds (to bundle it for real).
 */
function fakePackage(within = tmpdir()): { root: string; workflowsPath: string } {
  mkdirSync(within, { recursive: true });
  const root = mkdtempSync(join(within, 'bundle-cache-'));
  mkdirSync(join(root, 'src', 'workflows'), { recursive: true });
  mkdirSync(join(root, 'src', 'contract'), { recursive: true });
  writeFileSync(join(root, 'src', 'workflows', 'index.ts'), "export { limits } from '../contract/limits';\n");
  writeFileSync(join(root, 'src', 'contract', 'limits.ts'), 'export const limits = { maxSteps: 50 };\n');
  return { root, workflowsPath: join(root, 'src', 'workflows') };
}

test('the same sources give the same key', () => {
  const { workflowsPath } = fakePackage();
  expect(workflowBundleKey({ workflowsPath })).toBe(workflowBundleKey({ workflowsPath }));
});

test('a change in any module of the package, not only the workflows, gives a new key', () => {
  const { root, workflowsPath } = fakePackage();
  const before = workflowBundleKey({ workflowsPath });
  writeFileSync(join(root, 'src', 'contract', 'limits.ts'), 'export const limits = { maxSteps: 60 };\n');
  expect(workflowBundleKey({ workflowsPath })).not.toBe(before);
});

test('other workflow interceptor modules give a new key', () => {
  const { root, workflowsPath } = fakePackage();
  const interceptor = join(root, 'src', 'contract', 'limits.ts');
  expect(workflowBundleKey({ workflowsPath, workflowInterceptorModules: [interceptor] })).not.toBe(
    workflowBundleKey({ workflowsPath }),
  );
});

test('other modules shared by every run give a new key', () => {
  const { root, workflowsPath } = fakePackage();
  const shared = join(root, 'src', 'contract', 'limits.ts');
  expect(workflowBundleKey({ workflowsPath, preloadModules: [shared] })).not.toBe(workflowBundleKey({ workflowsPath }));
});

test('a webpack hook gives a new key', () => {
  const { workflowsPath } = fakePackage();
  expect(workflowBundleKey({ workflowsPath, webpackConfigHook: withSandboxGlobals })).not.toBe(
    workflowBundleKey({ workflowsPath }),
  );
});

test('a bundle made with the sandbox globals hook begins with their script-level bindings', async () => {
  // Inside the repository, so that the bundle's imports of @temporalio/workflow resolve.
  const { root, workflowsPath } = fakePackage(
    join(__dirname, '..', '..', 'node_modules', '.cache', 'bundle-cache-test'),
  );
  const cacheDir = mkdtempSync(join(tmpdir(), 'bundle-cache-dir-'));

  const bundle = await cachedWorkflowBundle({ workflowsPath, cacheDir, webpackConfigHook: withSandboxGlobals });
  rmSync(root, { recursive: true, force: true });

  expect(readFileSync(bundle.codePath, 'utf8').startsWith(sandboxGlobalsBanner())).toBe(true);
}, 60_000);

test('a bundle cached under the key is used as it is, without bundling again', async () => {
  const { workflowsPath } = fakePackage();
  const cacheDir = mkdtempSync(join(tmpdir(), 'bundle-cache-dir-'));
  const cached = join(cacheDir, `${workflowBundleKey({ workflowsPath })}.js`);
  writeFileSync(cached, '// the bundle of an earlier start\n');

  const bundle = await cachedWorkflowBundle({ workflowsPath, cacheDir });

  expect(bundle.codePath).toBe(cached);
  expect(readFileSync(bundle.codePath, 'utf8')).toBe('// the bundle of an earlier start\n');
});
