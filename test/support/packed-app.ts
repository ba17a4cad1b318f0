/**
 * A temporary app with the packed durable-tools installed: `npm pack` (which builds through `prepack`), the
 * tarball unpacked into the app's `node_modules/durable-tools` exactly where npm puts it, with the `bin` link npm
 * creates, and the package's dependencies linked from this repository's `node_modules` (a full `npm install`
 * of ~220 packages takes minutes on a loaded machine: `npm run check:package -- --npm-install` does that).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The repository root. */
export const REPO = join(__dirname, '..', '..');

/** The `ts` code blocks of a Markdown file, in order. */
export function typescriptBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? '');
}

/** A packed and installed app. */
export interface PackedApp {
  dir: string;
  tarball: string;
  /** Files in the tarball. */
  files: string[];
}

/** Packs the repository and installs the tarball into a new app directory (ESM, TypeScript nodenext). */
export function packAndInstall(options: { npmInstall?: boolean } = {}): PackedApp {
  const work = mkdtempSync(join(tmpdir(), 'durable-tools-pack-'));
  const name = execFileSync('npm', ['pack', '--silent', '--pack-destination', work], {
    cwd: REPO,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
    .trim()
    .split('\n')
    .pop()!;
  const tarball = join(work, name);
  const files = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).trim().split('\n');
  const dir = join(work, 'app');
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }),
  );
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        skipLibCheck: true,
        types: ['node'],
        outDir: 'out',
      },
      include: ['*.ts'],
    }),
  );
  if (options.npmInstall) {
    execFileSync(
      'npm',
      ['install', tarball, 'zod', 'typescript@5.9', '@types/node@20', '--prefer-offline', '--no-audit', '--no-fund'],
      {
        cwd: dir,
        stdio: 'inherit',
      },
    );
    return { dir, tarball, files };
  }
  const modules = join(dir, 'node_modules');
  const target = join(modules, 'durable-tools');
  mkdirSync(target, { recursive: true });
  execFileSync('tar', ['xzf', tarball, '-C', target, '--strip-components=1']);
  linkDependencies(join(REPO, 'node_modules'), modules);
  mkdirSync(join(modules, '.bin'));
  symlinkSync('../durable-tools/dist/cli/main.js', join(modules, '.bin', 'durable-tools'));
  chmodSync(join(target, 'dist', 'cli', 'main.js'), 0o755);
  return { dir, tarball, files };
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
