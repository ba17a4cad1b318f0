/**
 * `npm run stress:payloads`: hostile payload scenarios against a real Temporal server (TEMPORAL_ADDRESS when
 * set, else a headless dev server it starts itself). Two workers share Postgres transcript and idempotency
 * stores (tables unique to this run, dropped at the end), so stored outputs are paged across workers. Each
 * scenario is one agent run whose model (built on the worker, so the run's own input stays small) sends big
 * arguments, deep nesting, lone surrogates, invented fields, malformed or empty turns, and whose tools return
 * 150 KB, 5 MB or fail with a 5 MB message. For every run it checks whether Temporal terminated it, whether it
 * is still running after a generous deadline (stuck), whether it ended with another status than it must (or a
 * tool with effects ran on input it should have refused), and whether any effect happened twice (counted at a
 * ledger per idempotency key). The last line is `runs R, terminated T, stuck S, wrong-status W,
 * duplicate-effects D`; the exit code is 1 unless all but R are 0.
 *
 * Environment: STRESS_DEADLINE_S (default 240), STRESS_CONCURRENCY (default 4), DURABLE_TOOLS_POSTGRES_URL.
 */
import { TerminatedFailure } from '@temporalio/common';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { startAgentRun } from '../src/client/agent-run-client';
import { connectionSettingsFromEnv } from '../src/client/connection-settings';
import { startDevServer } from '../src/dev-server/dev-server';
import { IDEMPOTENCY_DEFAULTS } from '../src/stores/idempotency/idempotency-defaults';
import { PostgresIdempotencyStore } from '../src/stores/idempotency/postgres-idempotency-store';
import { PostgresTranscriptStore } from '../src/stores/transcripts/postgres-transcript-store';
import { createWorker } from '../src/runtime/create-worker';
import { hostileModel } from '../test/support/hostile-model';
import { payloadScenarios, type PayloadScenario } from '../test/support/payload-scenarios';
import { createPayloadTools, EffectLedger } from '../test/support/payload-tools';
import { agentRunOutcome } from '../test/support/run-outcome';

type Verdict = 'ok' | 'terminated' | 'stuck' | 'wrong-status';

interface RunReport {
  scenario: string;
  verdict: Verdict;
  duplicateEffects: boolean;
  detail: string;
}

function fromEnv(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number.`);
  return value;
}

async function runScenario(
  client: Client,
  scenario: PayloadScenario,
  taskQueue: string,
  ledger: EffectLedger,
  deadlineMs: number,
): Promise<RunReport> {
  const handle = await startAgentRun(client, scenario.input, { taskQueue });
  const report = (verdict: Verdict, detail: string, duplicateEffects = false): RunReport => ({
    scenario: scenario.name,
    verdict,
    duplicateEffects,
    detail,
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'stuck'>((resolve) => {
    timer = setTimeout(() => resolve('stuck'), deadlineMs);
  });
  try {
    const outcome = await Promise.race([agentRunOutcome(handle), deadline]);
    if (outcome === 'stuck') {
      await handle.terminate('stress:payloads: still running after the deadline').catch(() => undefined);
      return report('stuck', `still running after ${deadlineMs / 1000} s`);
    }
    const effects = ledger.of(handle.workflowId);
    const duplicates = effects.filter(([, count]) => count > 1);
    const duplicate = duplicates.length > 0;
    const dupDetail = duplicate ? `; duplicate effects ${JSON.stringify(duplicates)}` : '';
    if (outcome.status !== scenario.expected) {
      return report(
        'wrong-status',
        `ended ${outcome.status}, expected ${scenario.expected} (${outcome.reason ?? ''})${dupDetail}`,
        duplicate,
      );
    }
    const forward = effects.filter(([key]) => !key.endsWith('/undo'));
    if (scenario.effects === 'none' && forward.length > 0) {
      return report(
        'wrong-status',
        `a tool ran on input it should have refused: ${JSON.stringify(forward)}${dupDetail}`,
        duplicate,
      );
    }
    const problem = scenario.check?.(outcome, ledger, handle.workflowId);
    if (problem) return report('wrong-status', problem + dupDetail, duplicate);
    return report('ok', `${outcome.status}, ${outcome.steps.length} steps`, duplicate);
  } catch (error) {
    if (error instanceof WorkflowFailedError && error.cause instanceof TerminatedFailure) {
      return report('terminated', error.cause.message);
    }
    const description = await handle.describe().catch(() => undefined);
    if (description?.status.name === 'TERMINATED') return report('terminated', String(error));
    return report('wrong-status', `the run ended with ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    clearTimeout(timer);
  }
}

async function main(): Promise<number> {
  const deadlineMs = fromEnv('STRESS_DEADLINE_S', 240) * 1000;
  const concurrency = fromEnv('STRESS_CONCURRENCY', 4);
  const workDir = mkdtempSync(join(tmpdir(), 'durable-tools-stress-payloads-'));
  const logFile = join(workDir, 'worker.log');
  Runtime.install({
    logger: new DefaultLogger('WARN', (entry) => appendFileSync(logFile, `${entry.level} ${entry.message}\n`)),
  });
  const settings = connectionSettingsFromEnv();
  const server = settings.addressFromEnv
    ? undefined
    : await startDevServer({ ui: false, logFile: join(workDir, 'temporal-server.log') });
  const address = server?.address ?? settings.address;
  const namespace = server?.namespace ?? settings.namespace;
  const postgresUrl = process.env.DURABLE_TOOLS_POSTGRES_URL ?? IDEMPOTENCY_DEFAULTS.postgresUrl;
  const suffix = `${process.pid}_${Date.now().toString(36)}`;
  const tables = { transcripts: `stress_transcripts_${suffix}`, keys: `stress_keys_${suffix}` };
  const closers: Array<() => Promise<void>> = [];
  try {
    console.log(
      `stress:payloads: Temporal at ${address} (${server ? 'dev server started for this run' : 'TEMPORAL_ADDRESS'}); logs in ${workDir}`,
    );
    const { code } = await bundleWorkflowCode({
      workflowsPath: require.resolve('../src/workflows'),
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } as never,
    });
    const bundlePath = join(workDir, 'workflow-bundle.js');
    writeFileSync(bundlePath, code);
    const connection = await Connection.connect({ address });
    closers.push(() => connection.close());
    const client = new Client({ connection, namespace });
    const ledger = new EffectLedger();
    const taskQueue = `stress-payloads-${suffix}`;
    const workers: Worker[] = [];
    for (let i = 0; i < 2; i++) {
      // Each worker on its own connection, as two worker processes would be.
      const nativeConnection = await NativeConnection.connect({ address });
      closers.push(() => nativeConnection.close());
      const transcripts = new PostgresTranscriptStore({ connectionString: postgresUrl, table: tables.transcripts });
      const idempotencyStore = new PostgresIdempotencyStore({ connectionString: postgresUrl, table: tables.keys });
      closers.push(
        () => transcripts.close(),
        () => idempotencyStore.close(),
      );
      const { worker } = await createWorker({
        // Stores not given here stay in memory (durable ones are the default).
        stores: 'memory',
        tools: createPayloadTools(ledger),
        connection: nativeConnection,
        settings: { namespace, taskQueue },
        workflowBundle: { codePath: bundlePath },
        modelProviders: { hostile: hostileModel },
        transcripts,
        idempotencyStore,
      });
      workers.push(worker);
    }
    const scenarios = payloadScenarios();
    const reports: RunReport[] = [];
    const started = Date.now();
    const work = async () => {
      const queue = [...scenarios];
      const lanes = Array.from({ length: concurrency }, async () => {
        for (let scenario = queue.shift(); scenario; scenario = queue.shift()) {
          const report = await runScenario(client, scenario, taskQueue, ledger, deadlineMs);
          reports.push(report);
          const seconds = ((Date.now() - started) / 1000).toFixed(0);
          console.log(
            `stress:payloads: [${reports.length}/${scenarios.length}, ${seconds} s] ${report.verdict.toUpperCase()}${report.duplicateEffects ? ' +DUPLICATE' : ''}  ${report.scenario}: ${report.detail}`,
          );
        }
      });
      await Promise.all(lanes);
    };
    await workers[0]!.runUntil(() => workers[1]!.runUntil(work));
    const count = (verdict: Verdict) => reports.filter((r) => r.verdict === verdict).length;
    const duplicates = reports.filter((r) => r.duplicateEffects).length;
    const line = `runs ${reports.length}, terminated ${count('terminated')}, stuck ${count('stuck')}, wrong-status ${count('wrong-status')}, duplicate-effects ${duplicates}`;
    console.log(line);
    return count('terminated') + count('stuck') + count('wrong-status') + duplicates === 0 ? 0 : 1;
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    const admin = new Pool({ connectionString: postgresUrl, max: 1 });
    for (const table of [tables.transcripts, `${tables.transcripts}_payloads`, tables.keys]) {
      await admin.query(`DROP TABLE IF EXISTS "${table}"`).catch(() => undefined);
    }
    await admin.end();
    await server?.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(2);
  },
);
