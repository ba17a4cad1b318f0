/**
 * Process supervision of the long-running commands, driven as real processes: the parent watch applies only
 * to a command started through npm/npx and can be turned off; a worker started with `nohup … &` from a shell
 * that exits keeps running; Ctrl-C through npm exits 0; `worker --task-queue`; an unreachable server is
 * reported with its address and the fix.
 */
import { Client, Connection } from '@temporalio/client';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { LIFECYCLE_TIMING } from '../../src/cli/lifecycle';
import { findFreePort } from '../../src/dev-server/free-port';
import {
  REPO_ROOT,
  commandLine,
  descendants,
  isAlive,
  parentOf,
  runCliToEnd,
  startCli,
  type CliProcess,
  waitAllGone,
  waitForCliOutput,
} from '../support/cli-process';
import { testServer, uniqueTaskQueue } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

const TOOLS = 'test/support/cli-tools.ts';
const READY = /durable-tools worker: 5 tools/;
const dir = mkdtempSync(join(tmpdir(), 'durable-tools-supervision-'));

/** Environment of the processes: the test server, stores in a temporary directory, no npm variables. */
function cliEnv(name: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    TEMPORAL_ADDRESS: testServer().address,
    TEMPORAL_NAMESPACE: testServer().namespace,
    DURABLE_TOOLS_TASK_QUEUE: uniqueTaskQueue(`${name}-default`),
    DURABLE_TOOLS_SQLITE_PATH: join(dir, `${name}-keys.sqlite`),
    DURABLE_TOOLS_TRANSCRIPT_STORE: 'memory',
    TEMPORAL_CONFIG_FILE: join(dir, 'no-temporal.toml'),
  };
  // As if started from a terminal, even when jest itself runs under `npm test`.
  for (const key of Object.keys(process.env)) if (key.startsWith('npm_')) env[key] = '';
  return env;
}

/** Long enough for several checks of the parent watch, so a watch that would fire has fired. */
const SEVERAL_PARENT_CHECKS_MS = LIFECYCLE_TIMING.parentCheckMs * 4;

let client: Client;

beforeAll(async () => {
  client = new Client({
    connection: await Connection.connect({ address: testServer().address }),
    namespace: testServer().namespace,
  });
});
afterAll(async () => {
  await client?.connection.close();
});

/** Runs a one-step agent run on a task queue and resolves with its status. */
async function runOnce(taskQueue: string, item: string): Promise<string> {
  const handle = await startAgentRun(
    client,
    {
      goal: `Order a ${item}`,
      model: {
        provider: 'scripted',
        script: [{ toolCalls: [{ name: 'create_order', arguments: { item } }] }, { text: 'Done.', final: true }],
      },
    },
    { taskQueue },
  );
  return (await waitForAgentRun(handle)).status;
}

/**
 * Once `worker` (started through npm) is ready, SIGKILLs npm and checks, several parent checks later, that the
 * worker's node process still runs; then runs `check` on it, and at the end stops everything npm had started.
 */
async function expectWorkerOutlivesNpm(worker: CliProcess, check: (node: number) => Promise<void> | void) {
  await waitForCliOutput(worker, READY);
  const started = descendants(worker.child.pid!);
  const node = started.find((pid) => /src\/cli\/main\.ts worker/.test(commandLine(pid)))!;
  try {
    process.kill(worker.child.pid!, 'SIGKILL');
    await sleep(SEVERAL_PARENT_CHECKS_MS);
    expect(isAlive(node)).toBe(true);
    await check(node);
  } finally {
    for (const pid of started) if (isAlive(pid)) process.kill(pid, 'SIGTERM');
    await waitAllGone(started);
  }
}

describe('the parent watch', () => {
  test('a worker started with nohup … & from a shell that exits keeps running and serves its task queue', async () => {
    const taskQueue = uniqueTaskQueue('nohup');
    const log = join(dir, 'nohup-worker.log');
    const env = cliEnv('nohup');
    // The shell starts the worker in the background and exits at once, as a login shell closed after `nohup`.
    const script = `nohup "${process.execPath}" --import tsx src/cli/main.ts worker --tools ${TOOLS} --task-queue ${taskQueue} > "${log}" 2>&1 & echo $!`;
    const shellOutput = execFileSync('sh', ['-c', script], { cwd: REPO_ROOT, env: { ...process.env, ...env } });
    const pid = Number(String(shellOutput).trim());
    try {
      await waitFor('the worker to be ready', () => READY.test(readFileSync(log, 'utf8')), { timeoutMs: 90_000 });
      expect(readFileSync(log, 'utf8')).toContain(`on task queue "${taskQueue}"`);
      await sleep(SEVERAL_PARENT_CHECKS_MS);
      expect(isAlive(pid)).toBe(true);
      await expect(runOnce(taskQueue, 'lamp')).resolves.toBe('completed');
      expect(readFileSync(log, 'utf8')).not.toMatch(/is gone; stopping/);
    } finally {
      process.kill(pid, 'SIGTERM');
      await waitAllGone([pid]);
    }
    expect(readFileSync(log, 'utf8')).toMatch(/Worker stopped\./);
  });

  test('a worker started through npm stops when npm is killed with SIGKILL: no process is left', async () => {
    const worker = startCli(['worker', '--tools', TOOLS], cliEnv('npm-kill'), 'npm');
    await waitForCliOutput(worker, READY);
    const started = descendants(worker.child.pid!);
    expect(started.map(commandLine).join('\n')).toMatch(/src\/cli\/main\.ts worker/);
    process.kill(worker.child.pid!, 'SIGKILL');
    await waitAllGone(started);
    expect(worker.stderr()).toMatch(/is gone; stopping/);
  });

  test('--no-parent-watch keeps a worker started through npm running after npm is killed', async () => {
    const taskQueue = uniqueTaskQueue('no-watch');
    const worker = startCli(
      ['worker', '--tools', TOOLS, '--task-queue', taskQueue, '--no-parent-watch'],
      cliEnv('no-watch'),
      'npm',
    );
    await expectWorkerOutlivesNpm(worker, async () => {
      await expect(runOnce(taskQueue, 'chair')).resolves.toBe('completed');
      expect(worker.stderr()).not.toMatch(/is gone; stopping/);
    });
  });

  test('DURABLE_TOOLS_PARENT_WATCH=off keeps a worker started through npm running after npm is killed', async () => {
    const worker = startCli(
      ['worker', '--tools', TOOLS],
      { ...cliEnv('watch-off'), DURABLE_TOOLS_PARENT_WATCH: 'off' },
      'npm',
    );
    await expectWorkerOutlivesNpm(worker, (node) => {
      expect(parentOf(node)).not.toBe(worker.child.pid);
    });
  });
});

describe('Ctrl-C through npm', () => {
  test('when npm runs the command itself (script shell bash), the Ctrl-C npm relays is not a second Ctrl-C: exit 0', async () => {
    // A terminal's Ctrl-C reaches the whole process group, and npm relays it to its child once more. Here the
    // two copies come one after the other (the kernel may merge two that arrive together), while the worker
    // drains a call that ends only when the test releases it.
    const latch = mkdtempSync(join(dir, 'latch-'));
    const taskQueue = uniqueTaskQueue('ctrl-c-bash');
    const worker = startCli(
      ['worker', '--tools', 'test/support/drain-tools.ts', '--task-queue', taskQueue],
      { ...cliEnv('ctrl-c-bash'), npm_config_script_shell: 'bash', DRAIN_TOOLS_DIR: latch },
      'npm',
    );
    await waitForCliOutput(worker, /durable-tools worker: 1 tools/);
    const started = descendants(worker.child.pid!);
    const node = started.find((pid) => /src\/cli\/main\.ts worker/.test(commandLine(pid)))!;
    expect(parentOf(node)).toBe(worker.child.pid);
    const run = startAgentRun(
      client,
      {
        goal: 'Linger',
        model: {
          provider: 'scripted',
          script: [{ toolCalls: [{ name: 'linger', arguments: {} }] }, { text: 'ok', final: true }],
        },
      },
      { taskQueue },
    );
    await waitFor('the call to run', () => existsSync(join(latch, 'started')));
    process.kill(node, 'SIGINT'); // the terminal's copy
    await waitForCliOutput(worker, /SIGINT: stopping/);
    process.kill(worker.child.pid!, 'SIGINT'); // npm relays its own
    await waitForCliOutput(worker, /SIGINT relayed by npm: already stopping/);
    writeFileSync(join(latch, 'release'), '');
    await expect(worker.exited).resolves.toBe(0);
    expect(worker.stdout()).toMatch(/Worker stopped\./);
    expect(worker.stderr()).not.toMatch(/again; exiting without waiting/);
    await waitAllGone(started);
    await client.workflow.getHandle((await run).workflowId).terminate('test over');
  });

  test("with npm's default script shell, Ctrl-C to the process group drains the worker and leaves no process", async () => {
    const worker = startCli(['worker', '--tools', TOOLS], cliEnv('ctrl-c-sh'), 'npm');
    await waitForCliOutput(worker, READY);
    const started = descendants(worker.child.pid!);
    process.kill(-worker.child.pid!, 'SIGINT');
    await worker.exited;
    await waitAllGone(started);
    expect(worker.stdout()).toMatch(/Worker stopped\./);
  });
});

describe('an unreachable server', () => {
  let silent: Server;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    // Accepts connections and never answers: a firewall that lets the port open, or something else listening.
    silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  test('a command against a closed port exits 1 with the address and how to start or point to a server', async () => {
    const address = `127.0.0.1:${await findFreePort()}`;
    const { code, stderr } = await runCliToEnd(['runs'], { ...cliEnv('closed'), TEMPORAL_ADDRESS: address });
    expect(code).toBe(1);
    expect(stderr).toContain(`Cannot reach a Temporal server at ${address}`);
    expect(stderr).toMatch(/Start one with `.+ dev --tools <module>` or `.+ server`, or set TEMPORAL_ADDRESS/);
  });

  test('a command against a port that never answers exits 1 with the address and the fix', async () => {
    const { port } = silent.address() as { port: number };
    const address = `127.0.0.1:${port}`;
    const { code, stderr } = await runCliToEnd(['show', 'some-run'], {
      ...cliEnv('silent'),
      TEMPORAL_ADDRESS: address,
    });
    expect(code).toBe(1);
    expect(stderr).toContain(`Cannot reach a Temporal server at ${address}`);
    expect(stderr).toContain('or set TEMPORAL_ADDRESS');
  });

  test('worker against a closed port exits 1 with the address and the fix, not a transport error', async () => {
    const address = `127.0.0.1:${await findFreePort()}`;
    const { code, stderr } = await runCliToEnd(['worker', '--tools', TOOLS], {
      ...cliEnv('worker-closed'),
      TEMPORAL_ADDRESS: address,
    });
    expect(code).toBe(1);
    expect(stderr).toContain(`Cannot reach a Temporal server at ${address}`);
    expect(stderr).toMatch(/Start one with .+ dev --tools <module>/);
  });
});
