import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { startLedgerServer, type LedgerServer } from '../support/ledger-server';
import type { PlainHttpClient, PlainSendReport } from '../support/plain-http-tools';
import { PLAIN_HTTP_WORKER } from '../support/plain-http-worker';
import { startRequestCounter, type RequestCounter } from '../support/request-counter';
import { uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';
import { spawnTestWorkerProcess } from '../support/worker-process';

/**
 * Issue 20, the small pause case: a tool written the ordinary way — it awaits a downstream read, then
 * sends its effect with plain `fetch` or plain `node:http`, no helper, no `ctx` — on a worker process that
 * is SIGSTOPped inside that await for longer than its lease. A second worker takes the call over and
 * completes the run; then the first is resumed and its tool goes on to send. The worker's request guard
 * must refuse that request: the ledger (which does not deduplicate) sees exactly one effect.
 *
 * Nothing here depends on timing: the first worker is stopped once its read reached the gate (whose
 * answer is held), and resumed only after the run completed elsewhere and the answer was let go.
 */

const temporal = useTestTemporal();
let workDir: string;
let ledger: LedgerServer;
let gate: RequestCounter;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'lease-guard-pause-'));
});
beforeEach(async () => {
  ledger = await startLedgerServer();
  // Only the first worker's read is held: the worker that takes over reads and goes on at once.
  gate = await startRequestCounter({ holdAnswers: (path) => path.endsWith('-first') });
});
afterEach(async () => {
  for (const child of workers.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
  }
  gate.release();
  await gate.close();
  await ledger.close();
});

function spawnWorker(name: string, client: PlainHttpClient, taskQueue: string): Promise<ChildProcess> {
  return spawnTestWorkerProcess(PLAIN_HTTP_WORKER, taskQueue, {
    keysPath: join(workDir, `${taskQueue}-keys.sqlite`),
    transcriptsPath: join(workDir, `${taskQueue}-transcripts.sqlite`),
    ledgerUrl: ledger.url,
    gateUrl: gate.url,
    client,
    worker: name,
    reportDir: workDir,
  }).then((child) => {
    workers.push(child);
    return child;
  });
}

function reportOf(taskQueue: string, worker: string): PlainSendReport | undefined {
  const path = join(workDir, `${taskQueue}-${worker}.json`);
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as PlainSendReport) : undefined;
}

test.each<[string, PlainHttpClient]>([
  ['plain fetch', 'fetch'],
  ['plain node:http', 'node-http'],
])(
  'a worker paused inside an await past its lease cannot send with %s once resumed: one effect, run completed',
  async (_name, client) => {
    const taskQueue = uniqueTaskQueue(`lease-guard-${client}`);
    const first = await spawnWorker(`${taskQueue}-first`, client, taskQueue);
    const handle = await startAgentRun(
      temporal.client,
      {
        goal: 'pay 5',
        model: {
          provider: 'scripted',
          script: [{ toolCalls: [{ name: 'pay_plain', arguments: { amount: 5 } }] }, { text: 'paid', final: true }],
        },
      },
      { taskQueue },
    );
    // The first worker's tool is inside its await (its read reached the gate, whose answer is held): stop it.
    await gate.arrived(`/gate/${taskQueue}-first`);
    process.kill(first.pid!, 'SIGSTOP');

    // A second worker takes the call over once the first one's attempt timed out and its lease ran out.
    await spawnWorker(`${taskQueue}-second`, client, taskQueue);
    const result = await waitForAgentRun(handle);
    expect(result.status).toBe('completed');
    expect(ledger.effects).toHaveLength(1);
    expect(reportOf(taskQueue, 'second')).toMatchObject({ outcome: 'sent' });

    // The first worker wakes up with its read answered and goes on to send its effect.
    gate.release();
    process.kill(first.pid!, 'SIGCONT');
    const late = await waitFor('the resumed worker tried to send', () => reportOf(taskQueue, 'first'), {
      timeoutMs: 120_000,
    });
    expect(late.outcome).toBe('refused');
    expect(late.error).toMatch(/LeaseLostError/);
    expect(ledger.effects).toHaveLength(1);
  },
  600_000,
);
