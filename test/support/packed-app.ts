/**
 * Temporary apps with the packed durable-tools installed: `npm pack` (which builds through `prepack`), the
 * tarball unpacked once into a shared `node_modules/durable-tools` exactly where npm puts it, with the `bin` link
 * npm creates, and the package's dependencies linked from this repository's `node_modules` (a full
 * `npm install` of ~220 packages takes minutes on a loaded machine: `packAndInstall({ npmInstall: true })` does
 * that). Two apps share that one install through a `node_modules` link: a CommonJS app (the `package.json`
 * `npm init -y` writes) and an ESM app (the same with `"type": "module"`), both compiled with the
 * `tsconfig.json` docs/quickstart.md shows.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The repository root. */
export const REPO = join(__dirname, '..', '..');

/** The `ts` code blocks of a Markdown file, in order. */
export function typescriptBlocks(markdown: string): string[] {
  return codeBlocks(markdown, 'ts');
}

/**
 * The code blocks of a Markdown file in one language, in order: fenced at the start of a line, or indented
 * inside a list item (then given back without the indentation).
 */
export function codeBlocks(markdown: string, language: string): string[] {
  return [...markdown.matchAll(new RegExp(`^( *)\`\`\`${language}\n([\\s\\S]*?)^\\1\`\`\`$`, 'gm'))].map(
    ([, indent = '', code = '']) => code.replace(new RegExp(`^${indent}`, 'gm'), ''),
  );
}

/** The fences that open a TypeScript block, whatever their language tag (`ts`, `typescript`, `tsx`, ...). */
export function typescriptFences(markdown: string): number {
  return [...markdown.matchAll(/^ *```(ts|typescript|tsx|mts|cts)\b/gm)].length;
}

/** The README and every page of `docs/`, each with the prefix its blocks are compiled under. */
export function documentedPages(): Array<{ prefix: string; path: string }> {
  const docs = join(REPO, 'docs');
  return [
    { prefix: 'readme', path: join(REPO, 'README.md') },
    ...readdirSync(docs)
      .filter((name) => name.endsWith('.md'))
      .sort()
      .map((name) => ({ prefix: `docs-${name.replace(/\.md$/, '')}`, path: join(docs, name) })),
  ];
}

/**
 * Every `ts` block of the README and of `docs/*.md`, each with the file name it is compiled as: a block whose
 * first line names a file (`// tools.ts`) is that file, so another block can import it (`from './tools'`);
 * the others are `<page>-block-<n>.ts`.
 */
export function documentedTypescriptBlocks(): Array<{ file: string; code: string }> {
  return documentedPages().flatMap(({ prefix, path }) =>
    typescriptBlocks(readFileSync(path, 'utf8')).map((code, i) => ({
      file: /^\/\/ ([a-z][\w-]*\.ts)\n/.exec(code)?.[1] ?? `${prefix}-block-${i + 1}.ts`,
      code,
    })),
  );
}

/** The quickstart program: the first `ts` block of docs/quickstart.md. */
export function quickstartProgram(): string {
  const program = typescriptBlocks(readFileSync(join(REPO, 'docs', 'quickstart.md'), 'utf8'))[0];
  if (!program) throw new Error('docs/quickstart.md has no ts block');
  return program;
}

/** The module systems an app can have: `npm init -y`'s CommonJS, and ESM (`"type": "module"`). */
export const MODULE_SYSTEMS = ['commonjs', 'module'] as const;

/** One of {@link MODULE_SYSTEMS} (the value of `"type"` in the app's package.json). */
export type ModuleSystem = (typeof MODULE_SYSTEMS)[number];

/** The packed package, installed once and shared by a CommonJS and an ESM app. */
export interface PackedApp {
  /** The temporary directory holding everything below (remove it when done). */
  root: string;
  /** The app directory of each module system. */
  apps: Record<ModuleSystem, string>;
  /** The `node_modules` both apps use. */
  modules: string;
  tarball: string;
  /** Files in the tarball. */
  files: string[];
}

/** `npm pack` of the repository (building it through `prepack`) into `dir`; returns the tarball's path. */
export function packInto(dir: string): string {
  const name = execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], {
    cwd: REPO,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
    .trim()
    .split('\n')
    .pop()!;
  return join(dir, name);
}

/** Packs the repository, installs the tarball once and makes a CommonJS and an ESM app that use it. */
export function packAndInstall(options: { npmInstall?: boolean } = {}): PackedApp {
  const work = mkdtempSync(join(tmpdir(), 'durable-tools-pack-'));
  const tarball = packInto(work);
  const files = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).trim().split('\n');
  const install = join(work, 'install');
  mkdirSync(install);
  const modules = join(install, 'node_modules');
  if (options.npmInstall) {
    writeFileSync(join(install, 'package.json'), JSON.stringify({ name: 'install', version: '1.0.0', private: true }));
    execFileSync(
      'npm',
      [
        'install',
        tarball,
        'zod',
        'tsx',
        'typescript@5.9',
        '@types/node@20',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
      ],
      { cwd: install, stdio: 'inherit' },
    );
  } else {
    const target = join(modules, 'durable-tools');
    mkdirSync(target, { recursive: true });
    execFileSync('tar', ['xzf', tarball, '-C', target, '--strip-components=1']);
    linkDependencies(join(REPO, 'node_modules'), modules);
    mkdirSync(join(modules, '.bin'));
    symlinkSync('../durable-tools/dist/cli/main.js', join(modules, '.bin', 'durable-tools'));
    chmodSync(join(target, 'dist', 'cli', 'main.js'), 0o755);
  }
  const tsconfig = quickstartTsconfig();
  const apps = Object.fromEntries(
    MODULE_SYSTEMS.map((system) => [system, makeApp(join(work, system), system, modules, tsconfig)]),
  ) as Record<ModuleSystem, string>;
  return { root: work, apps, modules, tarball, files };
}

/** The tsconfig.json docs/quickstart.md shows (its first `json` block). */
function quickstartTsconfig(): string {
  const tsconfig = codeBlocks(readFileSync(join(REPO, 'docs', 'quickstart.md'), 'utf8'), 'json')[0];
  if (!tsconfig) throw new Error('docs/quickstart.md has no tsconfig.json block');
  return tsconfig;
}

/** An app as `npm init -y` makes it (plus `"type": "module"` for ESM), its node_modules a link to the install. */
function makeApp(dir: string, system: ModuleSystem, modules: string, tsconfig: string): string {
  mkdirSync(dir);
  execFileSync('npm', ['init', '-y'], { cwd: dir, stdio: 'ignore' });
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  if (system === 'module') pkg.type = 'module';
  else if (pkg.type !== undefined && pkg.type !== 'commonjs')
    throw new Error(`npm init -y wrote type ${String(pkg.type)}`);
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2));
  writeFileSync(join(dir, 'tsconfig.json'), tsconfig);
  symlinkSync(modules, join(dir, 'node_modules'));
  return dir;
}

/** Links every package of `from` (scoped ones one by one) into `to`, except durable-tools itself. */
function linkDependencies(from: string, to: string): void {
  for (const entry of readdirSync(from)) {
    if (entry.startsWith('.') || entry === 'durable-tools') continue;
    if (entry.startsWith('@')) {
      mkdirSync(join(to, entry), { recursive: true });
      for (const scoped of readdirSync(join(from, entry)))
        symlinkSync(join(from, entry, scoped), join(to, entry, scoped));
    } else {
      symlinkSync(join(from, entry), join(to, entry));
    }
  }
}
