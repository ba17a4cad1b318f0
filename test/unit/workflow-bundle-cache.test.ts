import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cachedWorkflowBundle, workflowBundleKey } from '../../src/runtime/workflow-bundle-cache';

/** A package with a workflows module and a module it imports, in a directory of its own. */
function fakePackage(): { root: string; workflowsPath: string } {
  const root = mkdtempSync(join(tmpdir(), 'bundle-cache-'));
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

test('a bundle cached under the key is used as it is, without bundling again', async () => {
  const { workflowsPath } = fakePackage();
  const cacheDir = mkdtempSync(join(tmpdir(), 'bundle-cache-dir-'));
  const cached = join(cacheDir, `${workflowBundleKey({ workflowsPath })}.js`);
  writeFileSync(cached, '// the bundle of an earlier start\n');

  const bundle = await cachedWorkflowBundle({ workflowsPath, cacheDir });

  expect(bundle.codePath).toBe(cached);
  expect(readFileSync(bundle.codePath, 'utf8')).toBe('// the bundle of an earlier start\n');
});
