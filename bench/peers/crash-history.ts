/**
 * `npm run bench:crash-history`: the crash round of `npm run bench:peers` for one durable-tools variant, with the
 * workflow-task events of each interrupted run printed. `RUNS` (20) runs of 10 steps at once; the service process
 * (worker + client) is SIGKILLed when the ledger has seen each of `KILL_AT` (30,90,150) effects and started again
 * at once (`RESTART_DELAY_MS` later). At the end, for the run whose effect triggered each kill: the time from
 * the kill to its next effect, its workflow-task events from 12 s before the kill on (scheduled with queue, kind
 * — 1 normal, 2 sticky — attempt and start-to-close timeout; started with the identity `pid@host`; timed out;
 * completed) and its effects with the pid that sent each. Times are seconds from the start of this script.
 * `RUN_INPUT` (JSON, default `{"fastPath":true}`) is merged into every run's input; `PEERS_WORKFLOW_TASK_TIMEOUT`
 * and `PEERS_LOG_LEVEL` as in bench:peers. The server writes only the first and the last attempt of a run of
 * failing workflow tasks. Printed, never asserted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { DurableToolsServiceConfig } from './durable-tools-service';
import { startPeerLedger } from './peer-ledger';
import { durableToolsSystem } from './peer-systems';
import { startService, type ServiceProcess } from './service-process';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const RUNS = Number(process.env.RUNS ?? 20);
const KILL_AT = (process.env.KILL_AT ?? '30,90,150').split(',').map(Number);
const RESTART_DELAY_MS = Number(process.env.RESTART_DELAY_MS ?? 0);

function eventMs(event: HistoryEvent): number {
  const time = event.eventTime!;
  return Number(time.seconds) * 1000 + Math.floor((time.nanos ?? 0) / 1e6);
}

/** One line's details of a workflow-task event (empty for other events). */
function describeEvent(event: HistoryEvent): string {
  const scheduled = event.workflowTaskScheduledEventAttributes;
  if (scheduled) {
    const queue = scheduled.taskQueue;
    return `queue=${queue?.name} kind=${queue?.kind} attempt=${scheduled.attempt} s2c=${scheduled.startToCloseTimeout?.seconds}s`;
  }
  if (event.workflowTaskStartedEventAttributes) return `identity=${event.workflowTaskStartedEventAttributes.identity}`;
  if (event.workflowTaskTimedOutEventAttributes)
    return `timeoutType=${event.workflowTaskTimedOutEventAttributes.timeoutType}`;
  if (event.workflowTaskCompletedEventAttributes)
    return `identity=${event.workflowTaskCompletedEventAttributes.identity}`;
  if (event.workflowTaskFailedEventAttributes) return `cause=${event.workflowTaskFailedEventAttributes.cause}`;
  return '';
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'durable-tools-crash-history-'));
  const ledger = await startPeerLedger();
  const runInput = JSON.parse(process.env.RUN_INPUT ?? '{"fastPath":true}') as object;
  const system = await durableToolsSystem(
    { ledgerUrl: ledger.url, steps: 10, dir, postgresUrl: '', output: 'inherit' },
    { name: 'crash-history', runInput },
  );
  const config = system.spec.config as DurableToolsServiceConfig;
  const t0 = Date.now();
  const at = (ms: number) => ((ms - t0) / 1000).toFixed(3);
  const effects: Array<{ key: string; at: number; pid?: number }> = [];
  const kills: Array<{ at: number; runId: string; key: string }> = [];
  let service: ServiceProcess = await startService(system.spec);
  const runIds = Array.from({ length: RUNS }, (_, i) => `history-${i}-${Date.now().toString(36)}`);
  const done = new Set<string>();
  let nextKill = 0;
  let up = true;
  let allDone = (): void => undefined;
  const finished = new Promise<void>((resolve) => (allDone = resolve));
  const watch = (runId: string, work: Promise<void>): void => {
    work.then(
      () => {
        done.add(runId);
        if (done.size === RUNS) allDone();
      },
      () => undefined,
    );
  };
  ledger.onEffect((key, total, pid) => {
    effects.push({ key, at: Date.now(), pid });
    if (!up || nextKill >= KILL_AT.length || total < KILL_AT[nextKill]!) return;
    service.kill();
    up = false;
    nextKill += 1;
    kills.push({ at: Date.now(), runId: key.slice(0, key.indexOf('/')), key });
    process.stderr.write(`[${at(Date.now())}] SIGKILL pid ${service.pid} at effect ${total} (${key})\n`);
    void new Promise((resolve) => setTimeout(resolve, RESTART_DELAY_MS))
      .then(() => startService(system.spec))
      .then((next) => {
        service = next;
        process.stderr.write(`[${at(Date.now())}] pid ${next.pid} up\n`);
        for (const runId of runIds) if (!done.has(runId)) watch(runId, next.attach(runId));
        up = true;
      });
  });
  for (const runId of runIds) watch(runId, service.run(runId).done);
  await finished;
  const connection = await Connection.connect({ address: config.address });
  const client = new Client({ connection, namespace: config.namespace });
  const types = temporal.api.enums.v1.EventType;
  try {
    for (const kill of kills) {
      const next = effects.find((e) => e.at >= kill.at && e.key.startsWith(`${kill.runId}/`) && e.key !== kill.key);
      const recovery = next ? `${((next.at - kill.at) / 1000).toFixed(1)} s` : '?';
      console.log(`\nrun ${kill.runId}: SIGKILL at ${at(kill.at)} after ${kill.key}; next effect after ${recovery}`);
      const history = await client.workflow.getHandle(kill.runId).fetchHistory();
      for (const event of history.events ?? []) {
        const details = describeEvent(event);
        if (eventMs(event) < kill.at - 12_000 || !details) continue;
        console.log(`  ${at(eventMs(event))} #${event.eventId} ${types[event.eventType!]} ${details}`);
      }
      const own = effects.filter((e) => e.key.startsWith(`${kill.runId}/`));
      console.log(
        `  effects: ${own.map((e) => `${e.key.slice(e.key.lastIndexOf('/'))} at ${at(e.at)} (pid ${e.pid})`).join(', ')}`,
      );
    }
  } finally {
    await service.stop();
    await connection.close();
    await system.close();
    await ledger.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
