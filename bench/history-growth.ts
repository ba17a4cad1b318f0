/**
 * `npm run bench:history`: how a run's Temporal history grows with its number of tool-call steps.
 *
 * Scripted agent runs of 10, 100 and 1,000 steps (one tool call per model turn, tools with small
 * realistic outputs), each ONE generation (no continue-as-new), on TEMPORAL_ADDRESS or a dev server this
 * bench starts. Each history is fetched and measured as its protobuf encoding and its number of events.
 * Side by side in the same run, the naive loop (`naiveAgentRun`: the whole transcript to the model every
 * turn) for contrast. Printed, never asserted; the last line is the ratio of per-step bytes at 1,000 vs 10
 * steps of the real workflow.
 */
import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { ScriptedModelSettings } from '../src/model/scripted-model';
import { defineTool } from '../src/tools/define-tool';
import { createWorker } from '../src/runtime/create-worker';
import type { AgentRunInput } from '../src/contract/agent-run-types';
import { fetchRunHistories, waitForAgentRun } from '../src/client/agent-run-client';
import { benchTemporal } from './bench-temporal';

const BENCH = {
  /** Steps of the real workflow's runs; the first and last are compared. */
  steps: [10, 100, 1_000],
  /**
   * Steps of the naive workflow's runs. Not 1,000: its history would reach ~100 MB, past Temporal's
   * 50 MB history limit (and minutes of re-sent transcript).
   */
  naiveSteps: [10, 100],
  /** Above every run's step count: each run is one generation. */
  continueAsNewAfterSteps: 1_000_000,
} as const;

/** Temporal's default thresholds for `continueAsNewSuggested` (server dynamic config). */
const SUGGEST_CONTINUE_AS_NEW = {
  countKey: 'limit.historyCount.suggestContinueAsNew',
  defaultEvents: 4 * 1024,
  sizeKey: 'limit.historySize.suggestContinueAsNew',
  defaultBytes: 4 * 1024 * 1024,
  /** What the bench's own dev server uses, so a 1,000-step run stays one generation. */
  raisedEvents: 1_000_000,
  raisedBytes: 1024 * 1024 * 1024,
} as const;

type History = temporal.api.history.v1.IHistory;
type Variant = 'agentRun' | 'naiveAgentRun';

const CITIES = ['Lisbon', 'Berlin', 'Oslo', 'Madrid', 'Prague'] as const;

const getWeather = defineTool({
  name: 'get_weather',
  description: 'Current weather in a city. Use for weather questions only; not a forecast.',
  input: z.object({ city: z.string() }),
  output: z.object({ city: z.string(), tempC: z.number(), conditions: z.string(), observedAt: z.string() }),
  effect: 'read-only',
  idempotent: true,
}).implement(async ({ city }, ctx) => {
  const n = Number(ctx.idempotencyKey.split('/').pop()) || 0;
  return {
    city,
    tempC: 8 + (n % 17),
    conditions: n % 3 ? 'partly cloudy' : 'light rain',
    observedAt: '2026-12-18T09:00Z',
  };
});

const getExchangeRate = defineTool({
  name: 'get_exchange_rate',
  description: 'Exchange rate between two currencies (ISO codes). Use before converting prices.',
  input: z.object({ from: z.string().length(3), to: z.string().length(3) }),
  output: z.object({ from: z.string(), to: z.string(), rate: z.number(), asOf: z.string() }),
  effect: 'read-only',
  idempotent: true,
}).implement(async ({ from, to }, ctx) => {
  const n = Number(ctx.idempotencyKey.split('/').pop()) || 0;
  return { from, to, rate: Number((1.05 + (n % 9) / 100).toFixed(4)), asOf: '2026-12-18' };
});

/** A model that alternates weather and exchange-rate look-ups, one tool call per turn, for `steps` steps. */
function scriptedSettings(steps: number): ScriptedModelSettings {
  return {
    provider: 'scripted',
    script: CITIES.flatMap((city, i) => [
      { text: `Checking the weather in ${city}.`, toolCalls: [{ name: 'get_weather', arguments: { city } }] },
      {
        text: 'Checking the exchange rate.',
        toolCalls: [{ name: 'get_exchange_rate', arguments: `{"from":"EUR","to":"${['USD', 'GBP', 'CHF'][i % 3]}"}` }],
      },
    ]),
    repeat: steps / (CITIES.length * 2),
    finalText: `Done: ${steps} look-ups.`,
  };
}

function runInput(steps: number): AgentRunInput {
  return {
    goal: 'Collect the weather and the exchange rates for my trip.',
    model: scriptedSettings(steps) as unknown as AgentRunInput['model'],
    limits: { maxSteps: steps, maxTurns: steps + 1 },
    continueAsNewAfterSteps: BENCH.continueAsNewAfterSteps,
    trackStatusSearchAttribute: false,
  };
}

/** Measured history of one run (summed over its generations, should it have continued as new). */
interface Measured {
  variant: Variant;
  steps: number;
  generations: number;
  bytes: number;
  events: number;
  seconds: number;
  /** Under Temporal's default thresholds, the step after which `continueAsNewSuggested` would be true. */
  defaultSuggestionAfterStep?: number;
  /** The server itself set `suggestContinueAsNew` in this history. */
  suggestedByServer: boolean;
  /** Encoded bytes by event type. */
  bytesByType: Map<string, number>;
}

/**
 * The number of tool steps completed when the first workflow task past Temporal's default thresholds
 * started (the workflow checks the flag before its next model turn), or undefined when none was.
 */
function stepAtDefaultSuggestion(history: History): number | undefined {
  const activityTypes = new Map<number, string>();
  let steps = 0;
  for (const event of history.events ?? []) {
    const id = Number(event.eventId);
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) activityTypes.set(id, scheduled.activityType?.name ?? '');
    const ended =
      event.activityTaskCompletedEventAttributes?.scheduledEventId ??
      event.activityTaskFailedEventAttributes?.scheduledEventId;
    const type = ended !== undefined && ended !== null ? activityTypes.get(Number(ended)) : undefined;
    if (type !== undefined && type !== 'callModel' && type !== 'describeTools') steps += 1;
    const started = event.workflowTaskStartedEventAttributes;
    if (
      started &&
      (id >= SUGGEST_CONTINUE_AS_NEW.defaultEvents ||
        Number(started.historySizeBytes ?? 0) >= SUGGEST_CONTINUE_AS_NEW.defaultBytes)
    ) {
      return steps;
    }
  }
  return undefined;
}

/** Encoded size of the events of each type. */
function bytesByEventType(histories: History[]): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const event of histories.flatMap((h) => h.events ?? [])) {
    const type = temporal.api.enums.v1.EventType[event.eventType ?? 0] ?? String(event.eventType);
    const bytes = temporal.api.history.v1.HistoryEvent.encode(event).finish().length;
    sizes.set(type, (sizes.get(type) ?? 0) + bytes);
  }
  return sizes;
}

async function main(): Promise<void> {
  const benchStarted = Date.now();
  const temporalServer = await benchTemporal({
    dynamicConfig: {
      [SUGGEST_CONTINUE_AS_NEW.countKey]: SUGGEST_CONTINUE_AS_NEW.raisedEvents,
      [SUGGEST_CONTINUE_AS_NEW.sizeKey]: SUGGEST_CONTINUE_AS_NEW.raisedBytes,
    },
  });
  const { client } = temporalServer;
  const taskQueue = `bench-history-${randomUUID().slice(0, 8)}`;
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('./history-workflows'),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } as never,
  });
  const { worker } = await createWorker({
    // Stores not given here stay in memory (durable ones are the default).
    stores: 'memory',
    tools: [getWeather, getExchangeRate],
    connection: temporalServer.nativeConnection,
    settings: { namespace: temporalServer.namespace, taskQueue },
    workflowBundle: { code },
  });

  const measure = async (variant: Variant, steps: number): Promise<Measured> => {
    const started = Date.now();
    const handle = await client.workflow.start(variant, {
      taskQueue,
      workflowId: `bench-history-${variant}-${steps}-${randomUUID().slice(0, 8)}`,
      args: [runInput(steps)],
    });
    const result = await waitForAgentRun(handle);
    if (result.status !== 'completed' || result.stepCount !== steps) {
      throw new Error(
        `${variant} with ${steps} steps ended ${result.status} after ${result.stepCount} steps: ${result.reason}`,
      );
    }
    const histories = await fetchRunHistories(client, handle.workflowId, handle.firstExecutionRunId);
    const measured: Measured = {
      variant,
      steps,
      generations: histories.length,
      bytes: histories.reduce((sum, h) => sum + temporal.api.history.v1.History.encode(h).finish().length, 0),
      events: histories.reduce((sum, h) => sum + (h.events?.length ?? 0), 0),
      seconds: (Date.now() - started) / 1000,
      bytesByType: bytesByEventType(histories),
      suggestedByServer: histories.some((h) =>
        (h.events ?? []).some((e) => e.workflowTaskStartedEventAttributes?.suggestContinueAsNew === true),
      ),
    };
    const atStep = histories.length === 1 ? stepAtDefaultSuggestion(histories[0]!) : undefined;
    if (atStep !== undefined) measured.defaultSuggestionAfterStep = atStep;
    process.stderr.write(`${variant} ${steps} steps: ${measured.seconds.toFixed(0)} s\n`);
    return measured;
  };

  // All runs at once (the bytes do not depend on timing): the 1,000-step run sets the wall time.
  const results = await worker.runUntil(() =>
    Promise.all([
      ...BENCH.steps.map((steps) => measure('agentRun', steps)),
      ...BENCH.naiveSteps.map((steps) => measure('naiveAgentRun', steps)),
    ]),
  );
  await temporalServer.close();

  const byVariant = (variant: Variant) =>
    results.filter((r) => r.variant === variant).sort((a, b) => a.steps - b.steps);
  const perStep = (r: Measured) => r.bytes / r.steps;
  const table = (variant: Variant, title: string): Measured[] => {
    const rows = byVariant(variant);
    console.log(title);
    console.log('   steps  generations      events    bytes  events/step  bytes/step  marginal bytes/step');
    rows.forEach((r, i) => {
      const prev = rows[i - 1];
      const marginal = prev ? ((r.bytes - prev.bytes) / (r.steps - prev.steps)).toFixed(0) : '-';
      console.log(
        `${String(r.steps).padStart(8)}  ${String(r.generations).padStart(11)}  ${String(r.events).padStart(10)}  ${String(r.bytes).padStart(8)}` +
          `  ${(r.events / r.steps).toFixed(1).padStart(11)}  ${perStep(r).toFixed(0).padStart(10)}  ${marginal.padStart(19)}`,
      );
    });
    return rows;
  };

  console.log("history = protobuf encoding of the run's whole event history (all generations, if it continued as new)");
  const real = table('agentRun', 'agentRun (transcript delta to the model activity):');
  const naive = table('naiveAgentRun', 'naiveAgentRun (whole transcript to the model activity every turn):');

  const longest = real[real.length - 1]!;
  const shares = [...longest.bytesByType].sort((a, b) => b[1] - a[1]).slice(0, 6);
  console.log(
    `where the bytes of the ${longest.steps}-step run go (bytes/step): ` +
      shares
        .map(([type, bytes]) => `${type.replace('EVENT_TYPE_', '')} ${(bytes / longest.steps).toFixed(0)}`)
        .join(', '),
  );
  if (temporalServer.startedServer) {
    console.log(
      `continue-as-new: under Temporal's default thresholds (${SUGGEST_CONTINUE_AS_NEW.defaultEvents} events or ` +
        `${SUGGEST_CONTINUE_AS_NEW.defaultBytes / 1024 / 1024} MiB) continueAsNewSuggested would have ended the ` +
        `${longest.steps}-step run's first generation after step ${longest.defaultSuggestionAfterStep ?? '(never)'}; ` +
        `this bench's dev server raises ${SUGGEST_CONTINUE_AS_NEW.countKey} and ${SUGGEST_CONTINUE_AS_NEW.sizeKey} to keep it one generation.`,
    );
  }
  for (const r of results.filter((m) => m.generations > 1 || m.suggestedByServer)) {
    console.log(
      `note: the server suggested continue-as-new in the ${r.steps}-step ${r.variant} run (${r.generations} generations measured together).`,
    );
  }
  const ratio = (rows: Measured[], a: number, b: number): string => {
    const big = rows.find((r) => r.steps === a);
    const small = rows.find((r) => r.steps === b);
    return big && small ? `x${(perStep(big) / perStep(small)).toFixed(2)}` : 'not measured';
  };
  console.log(`bench wall time: ${((Date.now() - benchStarted) / 1000).toFixed(0)} s`);
  console.log(
    `naive loop, history bytes per step: 100 vs 10 steps ${ratio(naive, 100, 10)} (not run at 1,000 steps: Temporal caps a history at 50 MB)`,
  );
  console.log(`history bytes per step: 100 vs 10 steps ${ratio(real, 100, 10)}`);
  console.log(`history bytes per step: 1000 vs 10 steps ${ratio(real, 1000, 10)}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
