/**
 * The package as an app gets it: `npm pack`, installed once and used by a CommonJS app (`npm init -y`) and an
 * ESM app; every TypeScript block of the README and docs/ type-checked in both, the quickstart run in both
 * against the test server, a TypeScript tools module loaded by the installed command without NODE_OPTIONS, the
 * client and root entries checked to load no worker, SQLite or Postgres code, and the names the entries share
 * imported by an ESM app.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { descendants, isAlive, runCliToEnd, startCli, waitAllGone, type CliLauncher } from '../support/cli-process';
import {
  documentedPages,
  documentedTypescriptBlocks,
  MODULE_SYSTEMS,
  packAndInstall,
  quickstartProgram,
  REPO,
  typescriptBlocks,
  typescriptFences,
  type ModuleSystem,
  type PackedApp,
} from '../support/packed-app';
import { testServer, uniqueTaskQueue } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

let app: PackedApp;
/** What `tsc -p` printed and returned in each app (both compiled at once in `beforeAll`). */
const compiled = {} as Record<ModuleSystem, { output: string; status: number | null }>;

/** The environment of a program or command of an app: the test server, and no loader from this process. */
function appEnv(taskQueue: string): NodeJS.ProcessEnv {
  return {
    TEMPORAL_ADDRESS: testServer().address,
    TEMPORAL_NAMESPACE: testServer().namespace,
    TEMPORAL_CONFIG_FILE: join(tmpdir(), 'durable-tools-no-temporal.toml'),
    DURABLE_TOOLS_TASK_QUEUE: taskQueue,
    NODE_OPTIONS: undefined,
  };
}

/** The installed `durable-tools` of an app, run with plain node in `cwd` (the app by default). */
function installed(system: ModuleSystem, cwd = app.apps[system]): CliLauncher {
  return { bin: join(app.apps[system], 'node_modules', '.bin', 'durable-tools'), cwd };
}

function compile(dir: string): Promise<{ output: string; status: number | null }> {
  const tsc = spawn(process.execPath, [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir]);
  let output = '';
  tsc.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  tsc.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => tsc.once('close', (status) => resolve({ output, status })));
}

beforeAll(async () => {
  app = packAndInstall();
  const blocks = documentedTypescriptBlocks();
  for (const dir of Object.values(app.apps)) {
    writeFileSync(join(dir, 'main.ts'), quickstartProgram());
    for (const block of blocks) writeFileSync(join(dir, block.file), block.code);
  }
  const results = await Promise.all(MODULE_SYSTEMS.map((system) => compile(app.apps[system])));
  MODULE_SYSTEMS.forEach((system, i) => (compiled[system] = results[i]!));
}, 900_000);

afterAll(() => {
  if (app) rmSync(app.root, { recursive: true, force: true });
});

test('the package holds only the build, package.json and README: no sources, tests or examples', () => {
  expect(app.files).toContain('package/dist/entries/client.js');
  expect(app.files).toContain('package/dist/cli/main.js');
  const outside = app.files.filter((file) => !/^package\/(dist\/|package\.json$|README\.md$|LICENSE)/.test(file));
  expect(outside).toEqual([]);
  expect(app.files.filter((file) => /examples|\.test\.|\/test\//.test(file))).toEqual([]);
});

test('the packed package.json has no repository-only script, and packing leaves the checkout as it was', () => {
  const manifest = JSON.parse(
    execFileSync('tar', ['-xzOf', app.tarball, 'package/package.json'], { encoding: 'utf8' }),
  );
  expect(manifest.scripts.prepare).toBeUndefined();
  const checkout = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'));
  expect(checkout.scripts.prepare).toBe('node test/support/node22/unshadow-node.js');
});

test('the README and docs/ hold TypeScript blocks for the package test to check, the quickstart among them', () => {
  const files = documentedTypescriptBlocks().map((block) => block.file);
  expect(files).toContain('readme-block-1.ts');
  expect(files).toContain('docs-quickstart-block-1.ts');
  expect(new Set(files.map((file) => file.replace(/-block-\d+\.ts$/, ''))).size).toBeGreaterThanOrEqual(10);
});

test('the blocks that name their file (`// tools.ts`) name each file once, and never the quickstart program', () => {
  const files = documentedTypescriptBlocks().map((block) => block.file);
  expect(files.filter((file, i) => files.indexOf(file) !== i)).toEqual([]);
  expect(files).not.toContain('main.ts');
});

test('every TypeScript block of the README and of every docs/ page is one the package test compiles', () => {
  const missed = documentedPages().flatMap(({ prefix, path }) => {
    const markdown = readFileSync(path, 'utf8');
    const fences = typescriptFences(markdown);
    const checked = typescriptBlocks(markdown).length;
    return fences === checked ? [] : [`${prefix}: ${fences} TypeScript fences, ${checked} checked`];
  });
  expect(missed).toEqual([]);
});

test("the README's quickstart is the program the package test runs (docs/quickstart.md)", () => {
  expect(typescriptBlocks(readFileSync(join(REPO, 'README.md'), 'utf8'))[0]).toBe(quickstartProgram());
});

test.each(MODULE_SYSTEMS)('every TypeScript block of the README and docs/ type-checks in a %s app', (system) => {
  expect(compiled[system].output).toBe('');
  expect(compiled[system].status).toBe(0);
});

test.each(MODULE_SYSTEMS)('the quickstart runs a worker and an agent run in a %s app', (system) => {
  const run = spawnSync(process.execPath, [join(app.apps[system], 'out', 'main.js')], {
    cwd: app.apps[system],
    encoding: 'utf8',
    env: { ...process.env, ...appEnv(uniqueTaskQueue(`package-${system}`)) },
    timeout: 300_000,
  });
  expect(run.stderr).not.toMatch(/Error/);
  expect(run.stdout).toContain('completed: The sum is 5. (1 tool call)');
  expect(run.status).toBe(0);
});

test.each(['durable-tools/client', 'durable-tools'])(
  '%s loads no worker, bundler, SQLite or Postgres code',
  (entry) => {
    const script = `
    require('${entry}');
    const loaded = Object.keys(require.cache);
    console.log(JSON.stringify(loaded.filter((p) => /better-sqlite3|node_modules\\/pg\\/|@temporalio\\/worker|core-bridge|webpack/.test(p))));`;
    const heavy = JSON.parse(
      execFileSync(process.execPath, ['-e', script], { cwd: app.apps.commonjs, encoding: 'utf8' }),
    ) as string[];
    expect(heavy).toEqual([]);
  },
);

test('an ESM app imports the shared names, the error family and the MCP host through /worker, /client and the root', () => {
  const script = `
    import { DurableToolsError, errors, createMcpHost, withMcpTools, connectionSettingsFromEnv } from 'durable-tools/worker';
    import { DurableToolsError as FromClient, errors as clientErrors, connectClient } from 'durable-tools/client';
    import { DurableToolsError as FromRoot, defineTool, TransientToolError } from 'durable-tools';
    import { startDevServer } from 'durable-tools/testing';
    console.log(JSON.stringify([DurableToolsError === FromClient && DurableToolsError === FromRoot
      && errors.McpConfigError === clientErrors.McpConfigError && new TransientToolError('x') instanceof FromRoot,
      ...[createMcpHost, withMcpTools, connectionSettingsFromEnv, connectClient, startDevServer, defineTool].map((f) => typeof f)]));`;
  const loaded = JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: app.apps.module, encoding: 'utf8' }),
  ) as unknown[];
  expect(loaded).toEqual([true, 'function', 'function', 'function', 'function', 'function', 'function']);
});

test('npx durable-tools runs the installed command', () => {
  const help = spawnSync('npx', ['--no-install', 'durable-tools', '--help'], {
    cwd: app.apps.commonjs,
    encoding: 'utf8',
  });
  expect(help.stdout).toMatch(/^usage: durable-tools <command>/);
  expect(help.status).toBe(0);
});

/** A TypeScript tools module as an ESM app writes it: a relative import with a .js extension, zod, the worker entry. */
const TOOLS_MODULE = `
import { z } from 'zod';
import { defineTool } from 'durable-tools/worker';
import { sum } from './sum.js';

export const tools = [
  defineTool({
    name: 'add',
    description: 'Adds two numbers.',
    input: z.object({ a: z.number(), b: z.number() }),
    output: z.object({ sum: z.number() }),
    effect: 'read-only',
  }).implement(async ({ a, b }) => ({ sum: sum(a, b) })),
];
`;
const ADD_SCRIPT = [
  { toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] },
  { text: 'The sum is 5.', final: true },
];

test('durable-tools worker --tools tools.ts, without NODE_OPTIONS, loads it with the app tsx and runs its tool', async () => {
  const dir = app.apps.module;
  writeFileSync(join(dir, 'tools.ts'), TOOLS_MODULE);
  writeFileSync(join(dir, 'sum.ts'), 'export const sum = (a: number, b: number): number => a + b;\n');
  writeFileSync(join(dir, 'turns.json'), JSON.stringify(ADD_SCRIPT));
  const env = appEnv(uniqueTaskQueue('package-ts-tools'));
  const worker = startCli(['worker', '--tools', 'tools.ts'], env, installed('module'));
  try {
    await waitFor(
      'the worker to start',
      () => {
        if (worker.child.exitCode !== null) throw new Error(`the worker exited: ${worker.stdout()}${worker.stderr()}`);
        return worker.stdout().includes('durable-tools worker: 1 tools');
      },
      { timeoutMs: 300_000 },
    );
    const run = await runCliToEnd(['run', 'Add 2 and 3', '--script', 'turns.json'], env, installed('module'));
    expect(run.stdout).toContain('The sum is 5.');
    expect(run.code).toBe(0);
  } finally {
    if (worker.child.exitCode === null) process.kill(-worker.child.pid!, 'SIGTERM');
    await worker.exited;
  }
  expect(worker.stderr()).not.toMatch(/Could not load|Error/);
});

test('dev --tools x.ts where no tsx can be found exits 1 at once, saying to npm i -D tsx, and starts no server', async () => {
  const outside = mkdtempSync(join(tmpdir(), 'tools-without-tsx-'));
  writeFileSync(join(outside, 'tools.ts'), TOOLS_MODULE);
  const dev = await runCliToEnd(
    ['dev', '--tools', 'tools.ts', '--port', '0', '--ui-port', '0', '--db', 'memory'],
    appEnv(uniqueTaskQueue('package-no-tsx')),
    installed('commonjs', outside),
  );
  expect(dev.stderr).toContain(`${join(outside, 'tools.ts')} is TypeScript`);
  expect(dev.stderr).toContain('`npm i -D tsx`');
  expect(dev.stderr).toContain('compile the module to JavaScript');
  expect(dev.stdout).not.toContain('Temporal server at');
  expect(dev.code).toBe(1);
});

test('SIGTERM to npx durable-tools server stops the server it started: exit, no process left', async () => {
  const npx = spawn(
    'npx',
    ['--no-install', 'durable-tools', 'server', '--port', '0', '--ui-port', '0', '--db', 'memory'],
    {
      cwd: app.apps.commonjs,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  let output = '';
  npx.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  npx.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise((resolve) => npx.once('exit', resolve));
  let started: number[] = [];
  try {
    await waitFor(
      'the server to start',
      () => {
        if (npx.exitCode !== null) throw new Error(`npx exited ${npx.exitCode}: ${output}`);
        return /Temporal server at \S+, web UI/.test(output);
      },
      {
        timeoutMs: 120_000,
      },
    );
    started = descendants(npx.pid!);
    expect(started.length).toBeGreaterThan(1); // the command and the Temporal server (and npx's shell, if any)
    process.kill(npx.pid!, 'SIGTERM');
    await exited;
    await waitAllGone(started);
  } finally {
    for (const pid of [npx.pid!, ...started]) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  }
});
