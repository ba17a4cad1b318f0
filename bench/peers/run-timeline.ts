/**
 * `npm run bench:timeline`: where the time of one bench:peers run goes. Runs the durable-tools fast path's
 * workload (10 `ledger_step` calls, the SQLite key store, eager start) one run at a time in this process, and
 * prints for the last runs (after warm-up) the client's marks (start returned, result), each activity's start and
 * end (local ones too, from an activity interceptor) and the events of the run's history, all in ms from the
 * start call (the dev server runs on this machine: one clock). Options: `--runs N` (default 8, the first half
 * warm-up), `--steps N` (default 10), `--regular` (regular activities instead of the fast path). The last line:
 * the median of each point (first activity, last activity's end, last task completed, result) over those runs.
 */
import { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgentRun } from '../../src/client/agent-run-client';
import { startDevServer } from '../../src/dev-server/dev-server';
import { createWorker } from '../../src/runtime/create-worker';
import { SqliteIdempotencyStore } from '../../src/stores/idempotency/sqlite-idempotency-store';
import { ledgerRunInput, ledgerStepTool } from './durable-tools-service';
import { startPeerLedger } from './peer-ledger';
import { engineBundleOptions } from '../../src/runtime/engine-bundle-options';

/** Options from the command line. */
interface TimelineOptions {
  runs: number;
  steps: number;
  regular: boolean;
}

function optionsFrom(argv: readonly string[]): TimelineOptions {
  const number = (flag: string, fallback: number): number => {
    const at = argv.indexOf(flag);
    const value = at >= 0 ? Number(argv[at + 1]) : fallback;
    if (!Number.isInteger(value) || value < 1) throw new Error(`${flag} takes a positive integer`);
    return value;
  };
  return { runs: number('--runs', 8), steps: number('--steps', 10), regular: argv.includes('--regular') };
}

/** This machine's wall clock in ms, below the millisecond. */
function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Marks of one run, in ms since its start call. */
class Marks {
  origin = nowMs();
  readonly lines: Array<{ at: number; what: string }> = [];
  restart(): void {
    this.origin = nowMs();
    this.lines.length = 0;
  }
  add(what: string): number {
    const at = nowMs() - this.origin;
    this.lines.push({ at, what });
    return at;
  }
}

/** An activity interceptor marking each activity's start and end (local activities included). */
function markingInterceptor(marks: Marks): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const name = `${ctx.info.activityType}${ctx.info.isLocal ? ' (local)' : ''}`;
        marks.add(`${name} started`);
        try {
          return await next(input);
        } finally {
          marks.add(`${name} ended`);
        }
      },
    },
  });
}

/** Where a run's time went: ms from the start call to each point (see {@link phasesOf}). */
interface Phases {
  startReturned: number;
  firstActivity: number;
  lastActivityEnded: number;
  lastTaskCompleted: number;
  result: number;
}

/** The points of {@link Phases} in a run's sorted lines (NaN when a run lacks one). */
function phasesOf(lines: ReadonlyArray<{ at: number; what: string }>): Phases {
  const first = (test: (what: string) => boolean) => lines.find((line) => test(line.what))?.at ?? NaN;
  const last = (test: (what: string) => boolean) => [...lines].reverse().find((line) => test(line.what))?.at ?? NaN;
  return {
    startReturned: first((what) => what === 'start call returned'),
    firstActivity: first((what) => what.endsWith(' started')),
    lastActivityEnded: last((what) => what.endsWith(' ended')),
    lastTaskCompleted: last((what) => what === 'history: workflowTaskCompleted'),
    result: first((what) => what === 'result'),
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** One line: the median of each point over the runs measured. */
function phaseSummary(runs: readonly Phases[]): string {
  const at = (key: keyof Phases) => median(runs.map((run) => run[key])).toFixed(1);
  return (
    `median of ${runs.length} runs, ms from the start call: start call returned ${at('startReturned')}, first ` +
    `activity started ${at('firstActivity')}, last activity ended ${at('lastActivityEnded')}, last workflow task ` +
    `completed ${at('lastTaskCompleted')}, result ${at('result')}`
  );
}

function eventMs(event: temporal.api.history.v1.IHistoryEvent): number {
  return Number(event.eventTime?.seconds ?? 0) * 1000 + (event.eventTime?.nanos ?? 0) / 1e6;
}

function eventName(event: temporal.api.history.v1.IHistoryEvent): string {
  const attributes = Object.keys(event).find((key) => key.endsWith('EventAttributes')) ?? 'event';
  const marker = event.markerRecordedEventAttributes?.markerName;
  return `${attributes.replace('EventAttributes', '')}${marker ? ` ${marker}` : ''}`;
}

async function main(options: TimelineOptions): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const dir = mkdtempSync(join(tmpdir(), 'durable-tools-timeline-'));
  const server = await startDevServer({ ui: false });
  const ledger = await startPeerLedger();
  const store = new SqliteIdempotencyStore({ path: join(dir, 'keys.sqlite') });
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../src/workflows'),
    ...engineBundleOptions(),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } as never,
  });
  writeFileSync(join(dir, 'workflow-bundle.js'), code);
  const connection = await NativeConnection.connect({ address: server.address });
  const client = new Client({ connection, namespace: server.namespace });
  const marks = new Marks();
  const { worker } = await createWorker({
    // Stores not given here stay in memory (durable ones are the default).
    stores: 'memory',
    tools: [ledgerStepTool(ledger.url)],
    connection,
    settings: { namespace: server.namespace, taskQueue: 'timeline' },
    workflowBundle: { codePath: join(dir, 'workflow-bundle.js') },
    idempotencyStore: store,
    workerOptions: { interceptors: { activity: [markingInterceptor(marks)] } },
  });
  const measured: Phases[] = [];
  try {
    await worker.runUntil(async () => {
      for (let i = 0; i < options.runs; i += 1) {
        marks.restart();
        const input = ledgerRunInput(`timeline-${i}`, options.steps, { fastPath: !options.regular });
        const handle = await startAgentRun(client, input, {
          taskQueue: 'timeline',
          workflowId: `timeline-${i}-${Date.now()}`,
          eagerStart: true,
        });
        marks.add('start call returned');
        await handle.result();
        const ended = marks.add('result');
        if (i < Math.floor(options.runs / 2)) continue;
        const events = (await handle.fetchHistory()).events ?? [];
        const lines = [
          ...marks.lines,
          ...events.map((event) => ({ at: eventMs(event) - marks.origin, what: `history: ${eventName(event)}` })),
        ].sort((a, b) => a.at - b.at);
        console.log(
          `run ${i + 1} (${options.regular ? 'regular' : 'fast path'}, ${options.steps} steps): ${ended.toFixed(1)} ms`,
        );
        for (const line of lines) console.log(`  ${line.at.toFixed(1).padStart(7)}  ${line.what}`);
        measured.push(phasesOf(lines));
      }
    });
    console.log(phaseSummary(measured));
  } finally {
    await connection.close();
    await store.close();
    await ledger.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main(optionsFrom(process.argv.slice(2))).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
