import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/*
 * Issue 43: at most one module of src/ touches private files of the Temporal SDK — paths under
 * `@temporalio/worker/lib/`, `@temporalio/<package>/lib/internal-*`, or modules of the worker package loaded by
 * their path inside it (`'./workflow/...'` through a require made from `@temporalio/worker`). That module is the
 * engine's sandbox, used only when a worker asks for it, with a fallback to the SDK's own path
 * (test/unit/engine-sandbox.test.ts).
 */

const SRC = join(__dirname, '..', '..', 'src');

const PRIVATE_SDK_PATH = [
  /@temporalio\/worker\/lib\//,
  /@temporalio\/[\w-]+\/lib\/internal-/,
  /['"`]\.\/workflow\/[\w-]+['"`]/,
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The code of a module without its comments (a comment may name a path it does not load). */
function codeOf(path: string): string {
  return readFileSync(path, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
}

test('one module of src/ refers to private files of the Temporal SDK: the engine sandbox', () => {
  const touching = sourceFiles(SRC)
    .filter((path) => PRIVATE_SDK_PATH.some((pattern) => pattern.test(codeOf(path))))
    .map((path) => relative(SRC, path));

  expect(touching).toEqual(['runtime/engine-sandbox.ts']);
});
