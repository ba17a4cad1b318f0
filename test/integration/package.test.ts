/**
 * The package as an app gets it: `npm pack`, installed into a temporary app, a program and the README's code
 * blocks type-checked against it, the program run against the test server, and the client entry checked to
 * load no worker, SQLite or Postgres code.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { descendants, isAlive, waitAllGone } from '../support/cli-process';
import { packAndInstall, REPO, typescriptBlocks, type PackedApp } from '../support/packed-app';
import { testServer, uniqueTaskQueue } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

/** A small app: a worker with one tool (durable-tools/worker) and a run started from durable-tools/client. */
const PROGRAM = `
import { z } from 'zod';
import { connectClient, startAgentRun, waitForAgentRun } from 'durable-tools/client';
import { createWorker, defineTool } from 'durable-tools/worker';

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  output: z.object({ sum: z.number() }),
  effect: 'read-only',
  idempotent: true,
}).implement(async ({ a, b }) => ({ sum: a + b }));

const { worker, close } = await createWorker({ tools: [add] });
const client = await connectClient();
const result = await worker.runUntil(async () => {
  const handle = await startAgentRun(client, {
    goal: 'Add 2 and 3',
    model: {
      provider: 'scripted',
      script: [{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, { text: 'The sum is 5.', final: true }],
    },
  });
  return waitForAgentRun(handle);
});
await close();
await client.connection.close();
console.log(\`\${result.status}: \${result.answer} (\${result.steps.length} tool call)\`);
`;

let app: PackedApp;

beforeAll(() => {
  app = packAndInstall();
  writeFileSync(join(app.dir, 'main.ts'), PROGRAM);
  typescriptBlocks(readFileSync(join(REPO, 'README.md'), 'utf8')).forEach((block, i) =>
    writeFileSync(join(app.dir, `readme-block-${i + 1}.ts`), block),
  );
}, 900_000);

test('the package holds only the build, package.json and README: no sources, tests or examples', () => {
  expect(app.files).toContain('package/dist/entries/client.js');
  expect(app.files).toContain('package/dist/cli/main.js');
  const outside = app.files.filter((file) => !/^package\/(dist\/|package\.json$|README\.md$|LICENSE)/.test(file));
  expect(outside).toEqual([]);
  expect(app.files.filter((file) => /examples|\.test\.|\/test\//.test(file))).toEqual([]);
});

test('a program and every TypeScript block of the README type-check against the installed package', () => {
  const blocks = typescriptBlocks(readFileSync(join(REPO, 'README.md'), 'utf8'));
  expect(blocks.length).toBeGreaterThanOrEqual(3);
  const tsc = spawnSync(process.execPath, [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app.dir], {
    encoding: 'utf8',
  });
  expect(tsc.stdout + tsc.stderr).toBe('');
  expect(tsc.status).toBe(0);
});

test('the program runs a worker and an agent run against the test server', () => {
  const run = spawnSync(process.execPath, [join(app.dir, 'out', 'main.js')], {
    cwd: app.dir,
    encoding: 'utf8',
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: testServer().address,
      TEMPORAL_NAMESPACE: testServer().namespace,
      DURABLE_TOOLS_TASK_QUEUE: uniqueTaskQueue('package'),
    },
    timeout: 300_000,
  });
  expect(run.stderr).not.toMatch(/Error/);
  expect(run.stdout).toContain('completed: The sum is 5. (1 tool call)');
  expect(run.status).toBe(0);
});

test('durable-tools/client loads no worker, bundler, SQLite or Postgres code', () => {
  const script = `
    require('durable-tools/client');
    const loaded = Object.keys(require.cache);
    console.log(JSON.stringify(loaded.filter((p) => /better-sqlite3|node_modules\\/pg\\/|@temporalio\\/worker|core-bridge|webpack/.test(p))));`;
  const heavy = JSON.parse(
    execFileSync(process.execPath, ['-e', script], { cwd: app.dir, encoding: 'utf8' }),
  ) as string[];
  expect(heavy).toEqual([]);
});

test('npx durable-tools runs the installed command', () => {
  const help = spawnSync('npx', ['--no-install', 'durable-tools', '--help'], { cwd: app.dir, encoding: 'utf8' });
  expect(help.stdout).toMatch(/^usage: durable-tools <command>/);
  expect(help.status).toBe(0);
});

test('SIGTERM to npx durable-tools server stops the server it started: exit, no process left', async () => {
  const npx = spawn(
    'npx',
    ['--no-install', 'durable-tools', 'server', '--port', '0', '--ui-port', '0', '--db', 'memory'],
    {
      cwd: app.dir,
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
