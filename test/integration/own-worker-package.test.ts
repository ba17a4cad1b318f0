/**
 * The package as a Temporal team uses it (issue 43): the tarball installed in a fresh app that has its own
 * worker (`Worker.create` with the `durableTools(...)` plugin from `durable-tools/worker`) and its own
 * workflows (`proxyTools`, `callTool`, `withSaga`, `runAgent` from `durable-tools/workflow`), with every
 * `@temporalio/*` package pinned at the lowest and at the highest supported version. The app's tools write
 * their effects to a local ledger that counts them per idempotency key (test/support/ledger-server.ts), and
 * the app's files are test/fixtures/own-worker-app. Installing takes minutes (test/support/own-worker-app.ts).
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { startLedgerServer, type LedgerEffect, type LedgerServer } from '../support/ledger-server';
import {
  appEnv,
  compileApp,
  installOwnWorkerApp,
  packForApps,
  pinnedTemporalPackages,
  runAppCli,
  startAppWorker,
  supportedTemporalVersions,
  temporalPackagesOf,
  type AppWorker,
  type PackedForApps,
} from '../support/own-worker-app';
import { uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

const temporal = useTestTemporal();

/** Ledger kinds whose writes are answered late, so a worker killed when the write is recorded never hears it. */
const answeredLate = new Set<string>();
let ledger: LedgerServer;
let packed: PackedForApps | undefined;

beforeAll(async () => {
  ledger = await startLedgerServer({
    delayMs: ({ kind, phase }) => (phase === 'after' && answeredLate.has(kind) ? 10_000 : 0),
  });
  packed = packForApps();
}, 600_000);

afterAll(async () => {
  await ledger?.close();
  if (packed) rmSync(packed.root, { recursive: true, force: true });
});

/** The effects the ledger recorded for one workflow's calls (their keys start with its id). */
function effectsOf(workflowId: string): LedgerEffect[] {
  return ledger.effects.filter((effect) => effect.key.startsWith(`${workflowId}/`));
}

/** A workflow id no other test uses. */
function newWorkflowId(name: string): string {
  return `own-worker-${name}-${randomUUID()}`;
}

describe.each(supportedTemporalVersions())('an app on its own worker, @temporalio/* pinned at %s', (version) => {
  const taskQueue = uniqueTaskQueue(`own-worker-${version}`);
  let app: string;
  let env: NodeJS.ProcessEnv;
  let compiled: { output: string; status: number | null };
  let worker: AppWorker | undefined;

  beforeAll(async () => {
    app = installOwnWorkerApp(packed!, version);
    env = appEnv({ taskQueue, ledgerUrl: ledger.url });
    compiled = await compileApp(app);
    if (compiled.status === 0) worker = await startAppWorker(app, env);
  }, 1_800_000); // a fresh install compiles better-sqlite3 when no prebuilt binary can be downloaded

  afterAll(async () => {
    await worker?.stop();
  });

  /** The running worker; fails the test with the compiler's output when the app did not compile. */
  function runningWorker(): AppWorker {
    if (!worker) throw new Error(`The app did not compile:\n${compiled.output}`);
    return worker;
  }

  test('the app holds one copy of each @temporalio package, at the pinned version', () => {
    const found = temporalPackagesOf(app);
    for (const name of pinnedTemporalPackages()) {
      expect(found.filter((pkg) => pkg.path.endsWith(name))).toEqual([{ path: `node_modules/${name}`, version }]);
    }
    expect(found.filter((pkg) => pkg.version !== version)).toEqual([]);
  });

  test("the app's worker and workflows type-check against the package and this Temporal version", () => {
    expect(compiled.output).toBe('');
    expect(compiled.status).toBe(0);
  });

  test('a pipeline whose third call fails permanently undoes the first two, newest first, and says why', async () => {
    runningWorker();
    const workflowId = newWorkflowId('pipeline');

    const outcome = await temporal.client.workflow.execute('tripPipeline', {
      taskQueue,
      workflowId,
      args: [{ city: 'Paris', amount: 5_000_000 }], // above the ledger's limit: HTTP 422, no effect
    });

    expect(outcome).toEqual({ status: 'undone', code: 'REQUEST_REJECTED', retryable: false });
    const effects = effectsOf(workflowId);
    const room = effects.find((effect) => effect.kind === 'room:Paris');
    const table = effects.find((effect) => effect.kind === 'table:Paris');
    expect(effects.map((effect) => [effect.kind, effect.key])).toEqual([
      ['room:Paris', room?.key],
      ['table:Paris', table?.key],
      ['cancel_table', `${table?.key}/undo`],
      ['cancel_room', `${room?.key}/undo`],
    ]);
  }, 600_000);

  test("an agent run inside the app's workflow waits for the app's own signal, which steers the next run", async () => {
    runningWorker();
    const workflowId = newWorkflowId('concierge');
    const handle = await temporal.client.workflow.start('concierge', {
      taskQueue,
      workflowId,
      args: [{ city: 'Lisbon' }],
    });

    await waitFor('the concierge to wait for the steer signal', async () => {
      return (await handle.query<string>('phase')) === 'waiting for steering';
    });
    expect(effectsOf(workflowId)).toEqual([]); // the first run only read the weather
    await handle.signal('steer', { city: 'Porto', nights: 3 });
    const outcome = await handle.result();

    expect(outcome).toEqual({
      runs: [
        { status: 'completed', answer: 'It is sunny in Lisbon.', calls: ['get_weather:succeeded'] },
        { status: 'completed', answer: 'Reserved 3 nights in Porto.', calls: ['reserve_room:succeeded'] },
      ],
    });
    expect(effectsOf(workflowId).map((effect) => [effect.kind, effect.amount])).toEqual([['room:Porto', 3]]);
    expect(await handle.query<string>('phase')).toBe('done');
  }, 600_000);

  test('a worker SIGKILLed during a call of the workflow and during a call of its agent run: one effect per key', async () => {
    runningWorker();
    const workflowId = newWorkflowId('kill');
    const killAt = ['pipeline-step-2', 'agent-step-1'];
    for (const kind of killAt) answeredLate.add(kind);
    const killed: string[] = [];
    let recovering = Promise.resolve();
    const stop = ledger.onEvent((event) => {
      if (event.phase !== 'recorded' || !event.key.startsWith(`${workflowId}/`) || !killAt.includes(event.kind)) return;
      if (killed.includes(event.kind)) return;
      killed.push(event.kind);
      // The effect is recorded and its answer held back: kill the worker (the one polling once an earlier restart
      // is done), then start it again on the same state directory.
      recovering = recovering.then(async () => {
        await runningWorker().kill();
        worker = await startAppWorker(app, env);
      });
    });
    try {
      const outcome = await temporal.client.workflow.execute('recordSteps', { taskQueue, workflowId });
      await recovering;

      expect(killed).toEqual(killAt);
      const effects = effectsOf(workflowId);
      expect(effects.map((effect) => effect.kind).sort()).toEqual([
        'agent-step-1',
        'agent-step-2',
        'pipeline-step-1',
        'pipeline-step-2',
        'pipeline-step-3',
      ]);
      expect(new Set(effects.map((effect) => effect.key)).size).toBe(effects.length);
      expect(outcome).toEqual({
        pipeline: ['pipeline-step-1', 'pipeline-step-2', 'pipeline-step-3'].map(
          (kind) => effects.find((effect) => effect.kind === kind)?.effectId,
        ),
        agent: { status: 'completed', calls: ['record_step:succeeded', 'record_step:succeeded'] },
      });
    } finally {
      stop();
      for (const kind of killAt) answeredLate.delete(kind);
      await recovering.catch(() => undefined);
    }
  }, 900_000); // two worker restarts on a possibly loaded machine

  test("a gated tool's activity called by hand from the app's workflow refuses to run: APPROVAL_REQUIRED", async () => {
    runningWorker();
    const workflowId = newWorkflowId('by-hand');

    const outcome = await temporal.client.workflow.execute('noticeByHand', {
      taskQueue,
      workflowId,
      args: [{ to: 'guest-1' }],
    });

    expect(outcome).toEqual({ ran: false, refusedWith: 'APPROVAL_REQUIRED', nonRetryable: true });
    expect(effectsOf(workflowId)).toEqual([]);
  }, 600_000);

  test('a gated tool called with callTool waits for `durable-tools approve`, then runs once', async () => {
    runningWorker();
    const workflowId = newWorkflowId('approve');
    const handle = await temporal.client.workflow.start('noticeWithApproval', {
      taskQueue,
      workflowId,
      args: [{ to: 'guest-2' }],
    });

    const waiting = await waitFor('the call to wait for a decision', async () => {
      const state = await handle.query<{ steps: Array<{ tool: string; status: string }> }>('getRunState');
      return state.steps.some((step) => step.status === 'awaiting_approval') ? state.steps : undefined;
    });
    expect(waiting.map((step) => [step.tool, step.status])).toEqual([['send_notice', 'awaiting_approval']]);
    expect(effectsOf(workflowId)).toEqual([]);
    const approved = await runAppCli(app, ['approve', workflowId, '--yes', '--approver', 'package-test'], env);
    expect(approved.stderr).toBe('');
    expect(approved.code).toBe(0);
    const outcome = await handle.result();

    const effects = effectsOf(workflowId);
    expect(effects.map((effect) => effect.kind)).toEqual(['notice:guest-2']);
    expect(outcome).toEqual({ noticeId: effects[0]?.effectId });
  }, 600_000);
});
