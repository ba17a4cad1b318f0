/**
 * The `durable-tools` command line, driven as real processes against the test server: exit codes, output,
 * and signals (Ctrl-C / SIGTERM, directly and through npm) that leave no process behind.
 */
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMMANDS } from '../../src/cli/commands';
import { Lifecycle } from '../../src/cli/lifecycle';
import { runCliInProcess } from '../support/cli-in-process';
import type { CliContext } from '../../src/cli/command';
import { getAgentRunState } from '../../src/client/agent-run-client';
import { answersAsTemporal } from '../../src/dev-server/answers-as-temporal';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import { commandLine, descendants, runCliToEnd, startCli, waitAllGone, type CliProcess } from '../support/cli-process';
import { testServer, uniqueTaskQueue } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

const TOOLS = 'test/support/cli-tools.ts';
const dir = mkdtempSync(join(tmpdir(), 'durable-tools-cli-'));

/** Writes a scripted model's turns to a JSON file for `run --script`. */
function scriptFile(name: string, turns: ScriptedTurn[]): string {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(turns));
  return file;
}

const ORDER_THEN_CHARGE = (amount: number): ScriptedTurn[] => [
  { toolCalls: [{ name: 'create_order', arguments: { item: 'book' } }] },
  { toolCalls: [{ name: 'charge', arguments: { amount } }] },
  { text: 'Done.', final: true },
];

/** Environment of the processes: the test server, a task queue of their own, stores in a temporary directory. */
function cliEnv(taskQueue: string): NodeJS.ProcessEnv {
  return {
    TEMPORAL_ADDRESS: testServer().address,
    TEMPORAL_NAMESPACE: testServer().namespace,
    DURABLE_TOOLS_TASK_QUEUE: taskQueue,
    DURABLE_TOOLS_SQLITE_PATH: join(dir, `${taskQueue}-keys.sqlite`),
    DURABLE_TOOLS_TRANSCRIPT_STORE: 'memory',
    DURABLE_TOOLS_STREAM_SQLITE_PATH: join(dir, `${taskQueue}-streams.sqlite`),
    TEMPORAL_CONFIG_FILE: join(dir, 'no-temporal.toml'),
  };
}

/** A context that collects a subcommand's output, for in-process calls. */
function collectingContext(): CliContext & { output: string[] } {
  const output: string[] = [];
  return {
    output,
    out: (line) => output.push(line),
    err: (line) => output.push(line),
    interactive: false,
    env: {},
    cwd: process.cwd(),
    lifecycle: new Lifecycle(() => {}),
    self: 'durable-tools',
  };
}

/** Waits for a line in a process's output (stdout or stderr), failing with its output if it exits first. */
async function waitForOutput(cli: CliProcess, pattern: RegExp): Promise<void> {
  let exitCode: number | undefined;
  void cli.exited.then((code) => (exitCode = code));
  await waitFor(
    `output ${pattern}`,
    () => {
      if (exitCode !== undefined) throw new Error(`exited ${exitCode}:\n${cli.stdout()}\n${cli.stderr()}`);
      return pattern.test(cli.stdout()) || pattern.test(cli.stderr());
    },
    { timeoutMs: 90_000 },
  );
}

describe('help and usage', () => {
  test.each(COMMANDS.map((c) => [c.name, c]))('%s --help prints its usage and exits 0', async (name, entry) => {
    const context = collectingContext();
    const command = await entry.load();
    expect(command.name).toBe(name);
    await expect(command.run(['--help'], context)).resolves.toBe(0);
    expect(context.output.join('\n')).toMatch(new RegExp(`^usage: durable-tools ${name}`));
    expect(context.output.join('\n')).toMatch(/exit codes:/);
  });

  test.each(['worker', 'dev'])('%s --help names the model settings and the MCP servers setting', async (name) => {
    const context = collectingContext();
    const command = await COMMANDS.find((c) => c.name === name)!.load();
    await command.run(['--help'], context);
    const help = context.output.join('\n');
    expect(help).toMatch(/DURABLE_TOOLS_MODEL=openai\|anthropic\|openai-compatible/);
    expect(help).toMatch(/OPENAI_API_KEY/);
    expect(help).toMatch(/--mcp-config <file>[\s\S]*DURABLE_TOOLS_MCP_CONFIG/);
  });

  test('durable-tools --help lists every command and exits 0', async () => {
    const { code, stdout } = await runCliToEnd(['--help'], {});
    expect(code).toBe(0);
    for (const command of COMMANDS) expect(stdout).toContain(`  ${command.name} `);
  });

  test('an unknown command exits 2 and lists the commands', async () => {
    const { code, stderr } = await runCliInProcess(['deploy']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/unknown command "deploy"[\s\S]*commands:/);
  });

  test('a missing argument or unknown option exits 2 with a pointer to --help', async () => {
    const missing = await runCliInProcess(['show']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/Missing argument: <workflow id>[\s\S]*durable-tools show --help/);
    const unknown = await runCliInProcess(['runs', '--colour']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/Unknown option '--colour'/);
  });

  test('mcp with contradictory or unknown options exits 2', async () => {
    const printed = jest.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const both = await runCliInProcess(['mcp', '--tools', TOOLS, '--stdio', '--http']);
      expect(both.code).toBe(2);
      expect(printed).toHaveBeenCalledWith(expect.stringContaining('usage: durable-tools mcp'));
    } finally {
      printed.mockRestore();
    }
    const unknown = await runCliToEnd(['mcp', '--tools', TOOLS, '--colour'], {});
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/Unknown option '--colour'[\s\S]*usage: durable-tools mcp/);
  });

  test('install-cli --path prints a Temporal CLI that runs as printed', async () => {
    const { code, stdout } = await runCliToEnd(['install-cli', '--path'], {});
    expect(code).toBe(0);
    const version = execFileSync('sh', ['-c', `"${stdout.trim()}" --version`], { encoding: 'utf8' });
    expect(version).toMatch(/temporal version/);
  });

  test("npm start -- --help prints the demo's usage and exits 0 without starting anything", async () => {
    const demo = startCli(['--help'], {}, 'npm-start');
    await expect(demo.exited).resolves.toBe(0);
    expect(demo.stdout()).toMatch(/^usage: npm start/m);
    expect(demo.stdout()).not.toMatch(/Starting a local Temporal|Temporal server:|Run \S+ started/);
  });

  test('dev refuses a port where a Temporal server already answers, and says how to use it', async () => {
    const port = testServer().address.split(':')[1]!;
    const { code, stderr } = await runCliToEnd(['dev', '--tools', TOOLS, '--port', port, '--db', 'memory'], {
      TEMPORAL_CONFIG_FILE: join(dir, 'no-temporal.toml'),
    });
    expect(code).toBe(1);
    expect(stderr).toContain(`already in use by a Temporal server that this command did not start`);
    expect(stderr).toContain(`TEMPORAL_ADDRESS=127.0.0.1:${port}`);
  });
});

describe('against a server, with a worker started through npm', () => {
  const taskQueue = uniqueTaskQueue('cli');
  const env = cliEnv(taskQueue);
  let worker: CliProcess;
  let client: Client;

  beforeAll(async () => {
    worker = startCli(['worker', '--tools', TOOLS], env, 'npm');
    await waitForOutput(worker, /durable-tools worker: 5 tools/);
    client = new Client({
      connection: await Connection.connect({ address: testServer().address }),
      namespace: testServer().namespace,
    });
  });
  afterAll(async () => {
    if (worker.child.exitCode === null) process.kill(-worker.child.pid!, 'SIGKILL');
    await client?.connection.close();
  });

  test('run shows each step and the outcome, and exits 0 when the run completes', async () => {
    const { code, stdout } = await runCliToEnd(
      ['run', 'Order a book', '--script', scriptFile('ok', ORDER_THEN_CHARGE(20)), '--id', `${taskQueue}-ok`],
      env,
    );
    expect(code).toBe(0);
    expect(stdout).toMatch(/step 1 {2}→ create_order \{"item":"book"\}\n\s+✓ ok: \{"orderId":"order-1"\}/);
    expect(stdout).toMatch(/step 2 {2}→ charge \{"amount":20\}/);
    expect(stdout).toMatch(/status: {2}completed/);
  });

  test("run prints the model's text of each turn once, whole, when its output is not a terminal", async () => {
    const script: ScriptedTurn[] = [
      { text: 'Ordering the book first.', toolCalls: [{ name: 'create_order', arguments: { item: 'book' } }] },
      { text: 'The book is ordered.', final: true },
    ];
    const { code, stdout } = await runCliToEnd(
      ['run', 'Order a book', '--script', scriptFile('text', script), '--id', `${taskQueue}-text`],
      env,
    );
    expect(code).toBe(0);
    expect(stdout.match(/^model › .*$/gm)).toEqual([
      'model › Ordering the book first.',
      'model › The book is ordered.',
    ]);
    // Each turn's text comes before the steps it proposed and after those of the turn before.
    expect(stdout).toMatch(
      /model › Ordering the book first\.\n\s+step 1 {2}→ create_order .*\n\s+✓ ok: .*\nmodel › The book is ordered\./,
    );
    expect(stdout).not.toMatch(/\x1b|\r/);
  });

  test('run prints no model text with --no-stream', async () => {
    const script: ScriptedTurn[] = [{ text: 'Nothing to do.', final: true }];
    const { code, stdout } = await runCliToEnd(
      ['run', 'Idle', '--script', scriptFile('quiet', script), '--id', `${taskQueue}-quiet`, '--no-stream'],
      env,
    );
    expect(code).toBe(0);
    expect(stdout).not.toMatch(/^model › /m);
  });

  test('run shows the progress of a running long call as it goes', async () => {
    const script: ScriptedTurn[] = [
      { toolCalls: [{ name: 'crunch', arguments: { units: 4, unitMs: 2_000 } }] },
      { text: 'Crunched.', final: true },
    ];
    const { code, stdout } = await runCliToEnd(
      ['run', 'Crunch the batch', '--script', scriptFile('crunch', script), '--id', `${taskQueue}-crunch`],
      env,
    );
    expect(code).toBe(0);
    expect(stdout).toMatch(/step 1 {2}→ crunch \{"units":4,"unitMs":2000\}/);
    // The poll sees most units' progress; at least one of them is printed before the step ends.
    expect(stdout).toMatch(/⋯ (25|50|75)% unit [1-3] of 4\n/);
    expect(stdout).toMatch(/✓ ok: \{"crunched":4\}/);
  });

  test('the printed history command works as typed', async () => {
    const { stdout } = await runCliToEnd(['show', `${taskQueue}-ok`], env);
    const command = /Full history: (.+)/.exec(stdout)?.[1];
    expect(command).toBeDefined();
    const history = execFileSync('sh', ['-c', command!], { encoding: 'utf8' });
    expect(history).toMatch(/WorkflowExecutionCompleted|Completed/);
  });

  test('a compensated run exits 3, shows the undo, and its workflow is Failed with the status as failure type', async () => {
    const runId = `${taskQueue}-declined`;
    const { code, stdout } = await runCliToEnd(
      [
        'run',
        'Order and pay too much',
        '--script',
        scriptFile('declined', ORDER_THEN_CHARGE(500)),
        '--id',
        runId,
        '--input',
        inputFile({ failurePolicy: { criticalTools: ['charge'] } }),
      ],
      env,
    );
    expect(code).toBe(3);
    expect(stdout).toMatch(/undo 1 {2}↩ undone by cancel_order/);
    // In the order it happened: the order made, the charge refused (with its hint), then the undo.
    expect(stdout).toMatch(/✓ ok: \{"orderId":"order-1"\}[\s\S]*✗ PERMISSION_DENIED[\s\S]*Hint: [\s\S]*undo 1 /);
    expect(stdout).toMatch(/status: {2}compensated/);
    expect(stdout).toMatch(/turns: {3}2 model turns, 2 tool calls\ntokens: {2}not reported by the model/);
    const error = await client.workflow
      .getHandle(runId)
      .result()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const cause = (error as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect(cause.type).toBe('compensated');
    expect(cause.nonRetryable).toBe(true);
    expect((cause.details?.[0] as { status: string }).status).toBe('compensated');
  });

  test('show prints the steps table: tool, arguments, status, attempts, observation', async () => {
    const { code, stdout } = await runCliToEnd(['show', `${taskQueue}-declined`], env);
    expect(code).toBe(0);
    expect(stdout).toMatch(/status: {2}compensated/);
    expect(stdout).toMatch(/step\s+tool\s+arguments\s+status\s+attempts\s+observation/);
    expect(stdout).toMatch(/1\s+create_order\s+\{"item":"book"\}\s+compensated\s+1\s+ok:/);
    expect(stdout).toMatch(/2\s+charge\s+\{"amount":500\}\s+failed\s+1\s+PERMISSION_DENIED/);
    expect(stdout).toMatch(/step 2 {2}✗ PERMISSION_DENIED: The card was declined[\s\S]*Hint: /);
  });

  test('show of a run that does not exist exits 1', async () => {
    const { code, stderr } = await runCliToEnd(['show', `${taskQueue}-nothing`], env);
    expect(code).toBe(1);
    expect(stderr).toContain(`No run ${taskQueue}-nothing`);
  });

  test('runs lists the runs with their status and filters by status', async () => {
    const query = ['--query', `TaskQueue = '${taskQueue}'`];
    const all = await runCliToEnd(['runs', ...query], env);
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(new RegExp(`${taskQueue}-declined\\s+compensated\\s+FAILED`));
    expect(all.stdout).toMatch(new RegExp(`${taskQueue}-ok\\s+completed\\s+COMPLETED`));
    const compensated = await runCliToEnd(['runs', '--status', 'compensated', ...query], env);
    expect(compensated.stdout).toContain(`${taskQueue}-declined`);
    expect(compensated.stdout).not.toContain(`${taskQueue}-ok`);
  });

  test('runs --json names each run by workflowId, and by runId, its deprecated name', async () => {
    const listed = await runCliToEnd(['runs', '--json', '--query', `TaskQueue = '${taskQueue}'`], env);
    expect(listed.code).toBe(0);
    const rows = listed.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { workflowId: string; runId: string; status: string });
    expect(rows).toContainEqual(
      expect.objectContaining({ workflowId: `${taskQueue}-ok`, runId: `${taskQueue}-ok`, status: 'completed' }),
    );
  });

  test('run --detach returns at once; cancel compensates the run and ends it cancelled', async () => {
    const runId = `${taskQueue}-held`;
    const script = scriptFile('held', [
      { toolCalls: [{ name: 'create_order', arguments: { item: 'lamp' } }] },
      { toolCalls: [{ name: 'hold', arguments: {} }] },
      { text: 'never', final: true },
    ]);
    const detached = await runCliToEnd(['run', 'Hold forever', '--script', script, '--id', runId, '--detach'], env);
    expect(detached.code).toBe(0);
    expect(detached.stdout).toContain(`Run ${runId} started`);
    await waitFor('the hold call to run', async () => {
      const state = await getAgentRunState(client, runId).catch(() => undefined);
      return state?.steps.some((step) => step.tool === 'hold' && step.status === 'running');
    });
    const cancelled = await runCliToEnd(['cancel', runId], env);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout).toContain(`Run ${runId}: cancelled`);
    const description = await client.workflow.getHandle(runId).describe();
    expect(description.status.name).toBe('CANCELLED');
    const again = await runCliToEnd(['cancel', runId], env);
    expect(again.code).toBe(1);
  });

  test('run: Ctrl-C stops watching, exits 130 and leaves the run going', async () => {
    const runId = `${taskQueue}-watched`;
    const script = scriptFile('watched', [
      { toolCalls: [{ name: 'hold', arguments: {} }] },
      { text: 'never', final: true },
    ]);
    const run = startCli(['run', 'Hold while watched', '--script', script, '--id', runId], env);
    await waitForOutput(run, /step 1 {2}→ hold/);
    process.kill(run.child.pid!, 'SIGINT');
    await expect(run.exited).resolves.toBe(130);
    expect(run.stdout()).toMatch(/Stopped watching; the run goes on/);
    const handle = client.workflow.getHandle(runId);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    await handle.cancel();
    await waitFor('the run to end cancelled', async () => (await handle.describe()).status.name === 'CANCELLED');
  });

  test('mcp --http serves over HTTP until SIGTERM, then exits 0 and leaves no process', async () => {
    const mcp = startCli(['mcp', '--tools', TOOLS, '--http', '--port', '0', '--no-worker'], env);
    await waitForOutput(mcp, /MCP server at (http:\S+):/);
    const url = /MCP server at (http:\S+):/.exec(mcp.stderr())![1]!;
    const response = await fetch(url, { method: 'GET' });
    expect(response.status).toBeLessThan(500);
    const started = descendants(mcp.child.pid!);
    process.kill(mcp.child.pid!, 'SIGTERM');
    await expect(mcp.exited).resolves.toBe(0);
    await waitAllGone(started);
  });

  test('SIGTERM to npm stops the worker it started: no process is left', async () => {
    const started = descendants(worker.child.pid!);
    expect(started.map(commandLine).join('\n')).toMatch(/src\/cli\/main\.ts worker/);
    process.kill(worker.child.pid!, 'SIGTERM');
    await waitAllGone([worker.child.pid!, ...started]);
  });
});

function inputFile(input: object): string {
  const file = join(dir, `input-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(input));
  return file;
}

describe('server: a local Temporal server of its own, until SIGTERM', () => {
  test('it says it ignores TEMPORAL_ADDRESS, serves, and SIGTERM stops it: exit 0, no process left', async () => {
    const server = startCli(['server', '--port', '0', '--ui-port', '0', '--db', 'memory'], {
      TEMPORAL_ADDRESS: testServer().address,
      TEMPORAL_CONFIG_FILE: join(dir, 'no-temporal.toml'),
    });
    await waitForOutput(server, /Temporal server at (\S+), web UI at http/);
    expect(server.stderr()).toContain(`points at ${testServer().address}; \`server\` starts its own server regardless`);
    const address = /Temporal server at (\S+),/.exec(server.stdout())![1]!;
    expect(address).not.toBe(testServer().address);
    await expect(answersAsTemporal(address, 'default')).resolves.toBe(true);
    const started = descendants(server.child.pid!);
    expect(started.map(commandLine).join('\n')).toMatch(/temporal server start-dev/);
    process.kill(server.child.pid!, 'SIGTERM');
    await expect(server.exited).resolves.toBe(0);
    expect(server.stdout()).toMatch(/Temporal server stopped\./);
    await waitAllGone(started);
  });
});

describe('dev: a server, its UI and a worker, stopped in order', () => {
  const devArgs = ['dev', '--tools', TOOLS, '--port', '0', '--ui-port', '0', '--db', 'memory'];
  const env = {
    TEMPORAL_CONFIG_FILE: join(dir, 'no-temporal.toml'),
    DURABLE_TOOLS_TRANSCRIPT_STORE: 'memory',
    DURABLE_TOOLS_SQLITE_PATH: join(dir, 'dev-keys.sqlite'),
  };

  test('Ctrl-C (SIGINT) drains the worker, then stops the server, exits 0 and leaves no process', async () => {
    const dev = startCli(devArgs, env);
    await waitForOutput(dev, /durable-tools worker: 5 tools/);
    const started = descendants(dev.child.pid!);
    expect(started.map(commandLine).join('\n')).toMatch(/temporal server start-dev/);
    process.kill(dev.child.pid!, 'SIGINT');
    await expect(dev.exited).resolves.toBe(0);
    expect(dev.stderr()).toMatch(/Stopping the Temporal server/);
    expect(dev.stdout()).toMatch(/Stopped\./);
    await waitAllGone(started);
  });

  test('SIGTERM to npm run stops the worker and the server: no process is left', async () => {
    const dev = startCli(devArgs, env, 'npm');
    await waitForOutput(dev, /durable-tools worker: 5 tools/);
    const started = descendants(dev.child.pid!);
    expect(started.map(commandLine).join('\n')).toMatch(/temporal server start-dev/);
    process.kill(dev.child.pid!, 'SIGTERM');
    await waitAllGone([dev.child.pid!, ...started]);
  });
});
