import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { enableTypeScriptFor, ToolsModuleError } from '../../src/runtime/typescript-tools-module';

/** A resolver that finds tsx only in `dirs`, and records what it registers. */
function project(dirs: string[]) {
  const registered: string[] = [];
  return {
    registered,
    deps: {
      typeScriptLoaded: () => false,
      nodeStripsTypes: () => false,
      resolveFrom: (request: string, fromDir: string) =>
        dirs.includes(fromDir) ? join(fromDir, 'node_modules', request) : undefined,
      register: (path: string) => void registered.push(path),
    },
  };
}

describe('loading a TypeScript tools module', () => {
  test('a JavaScript module needs no loader', () => {
    const { deps, registered } = project([]);
    expect(enableTypeScriptFor('/app/dist/tools.js', '/app', deps)).toBe('not-typescript');
    expect(registered).toEqual([]);
  });

  test('registers nothing when require already loads TypeScript (node --import tsx)', () => {
    const { deps, registered } = project(['/app/src']);
    expect(enableTypeScriptFor('/app/src/tools.ts', '/app', { ...deps, typeScriptLoaded: () => true })).toBe(
      'already-loaded',
    );
    expect(registered).toEqual([]);
  });

  test.each(['tools.ts', 'tools.mts', 'tools.cts'])("registers the tsx of the module's own project for %s", (file) => {
    const { deps, registered } = project(['/app/src']);
    expect(enableTypeScriptFor(`/app/src/${file}`, '/elsewhere', deps)).toBe('registered');
    expect(registered).toEqual(['/app/src/node_modules/tsx/cjs/api']);
  });

  test("falls back to the working directory's tsx", () => {
    const { deps, registered } = project(['/app']);
    enableTypeScriptFor('/shared/tools.ts', '/app', deps);
    expect(registered).toEqual(['/app/node_modules/tsx/cjs/api']);
  });

  test('without tsx in the project it says at once what to install or run, and registers nothing', () => {
    const { deps, registered } = project([]);
    const error = (() => {
      try {
        enableTypeScriptFor('/app/src/tools.ts', '/app', deps);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ToolsModuleError);
    expect(error).toMatchObject({ code: 'TYPESCRIPT_LOADER_MISSING' });
    expect((error as Error).message).toMatch(/^\/app\/src\/tools\.ts is TypeScript/);
    expect((error as Error).message).toContain('`npm i -D tsx`');
    expect((error as Error).message).toContain('compile the module to JavaScript and pass the .js file');
    expect(registered).toEqual([]);
  });

  test('without tsx, a Node that strips types itself is left to load the module', () => {
    const { deps, registered } = project([]);
    expect(enableTypeScriptFor('/app/src/tools.ts', '/app', { ...deps, nodeStripsTypes: () => true })).toBe(
      'node-strips-types',
    );
    expect(registered).toEqual([]);
  });

  test('with the real resolution, a module in a directory with no node_modules above it finds no tsx', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tools-without-tsx-'));
    writeFileSync(join(dir, 'tools.ts'), 'export const tools = [];\n');
    expect(() =>
      enableTypeScriptFor(join(dir, 'tools.ts'), dir, { typeScriptLoaded: () => false, nodeStripsTypes: () => false }),
    ).toThrow(ToolsModuleError);
  });
});
