/**
 * `npm run fixtures:record`: records the event histories that `test/unit/workflow-replay.test.ts`
 * replays to catch nondeterministic changes of the workflow code.
 *
 * Starts a headless in-memory dev server, runs a worker with the tools below, runs each scenario as an
 * agent run and writes every generation's history as `test/fixtures/histories/<scenario>.json` (one
 * generation) or `<scenario>.<generation>.json` (a run that continued as new), in Temporal's JSON form
 * (`historyToJSON`, the shape of `temporal workflow show -o json`). The workflow id of a scenario is
 * `replay-<scenario>`.
 *
 * Re-record after an intended, compatible change of the workflow (a new fixture for a new code path is
 * welcome); a change that makes old histories fail to replay needs versioning (`patched`) instead, since
 * runs already in flight replay exactly like these fixtures.
 */
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { Client, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { forkAgentRun } from '../../src/client/fork-agent-run';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { connectClient, fetchRunHistories, startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { connectionSettingsFromEnv } from '../../src/client/connection-settings';
import { startDevServer } from '../../src/dev-server/dev-server';
import type { ScriptedModelSettings } from '../../src/model/scripted-model';
import { compensationInput } from '../../src/tools/compensation-input';
import { defineTool } from '../../src/tools/define-tool';
import { defineAgentTool } from '../../src/tools/define-agent-tool';
import { createWorker } from '../../src/runtime/create-worker';
import type { AgentRunInput, RunStatus } from '../../src/contract/agent-run-types';

/** Where the fixtures go, and how their workflow ids are made. */
export const HISTORY_FIXTURES = {
  dir: join(__dirname, '..', 'fixtures', 'histories'),
  workflowIdPrefix: 'replay-',
  taskQueue: 'replay-fixtures',
} as const;

/** An HTTP-like error, as a fetch wrapper would raise it. */
function httpError(status: number, message: string): Error {
  return Object.assign(new Error(message), { status });
}

const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Reads an order by id. Read-only; use before changing an order.',
  input: z.object({ orderId: z.string() }),
  output: z.object({ orderId: z.string(), status: z.string(), items: z.number() }),
  effect: 'read-only',
  idempotent: true,
}).implement(async ({ orderId }) => ({ orderId, status: 'open', items: 2 }));

const fetchQuote = defineTool({
  name: 'fetch_quote',
  description: 'Fetches a shipping quote. The carrier API is flaky: it answers 503 to the first two attempts.',
  input: z.object({ weightKg: z.number().positive() }),
  output: z.object({ priceEur: z.number() }),
  effect: 'read-only',
  idempotent: true,
  retry: { maximumAttempts: 4, initialDelay: '200 ms', maxDelay: '1 s' },
}).implement(async ({ weightKg }, ctx) => {
  if (ctx.attempt < 3) throw httpError(503, 'Carrier API: 503 Service Unavailable');
  return { priceEur: Math.round(weightKg * 450) / 100 };
});

const reserveStockContract = defineTool({
  name: 'reserve_stock',
  description: 'Reserves units of a product. Undone by release_stock.',
  input: z.object({ sku: z.string(), quantity: z.number().int().min(1) }),
  output: z.object({ reservationId: z.string() }),
  effect: 'compensable',
  undo: 'release_stock',
  idempotent: true,
});

const releaseStockContract = defineTool({
  name: 'release_stock',
  description: 'Releases a reservation made by reserve_stock. Used to undo reserve_stock.',
  input: compensationInput(reserveStockContract),
  output: z.object({ released: z.boolean() }),
  effect: 'irreversible',
  idempotent: true,
});

const chargeCard = defineTool({
  name: 'charge_card',
  description: 'Charges the card on file. Irreversible: call only after every reservation succeeded.',
  input: z.object({ amountEur: z.number().positive() }),
  output: z.object({ chargeId: z.string() }),
  effect: 'irreversible',
  idempotent: true,
  approval: 'never',
}).implement(async ({ amountEur }, ctx) => {
  if (amountEur > 500) throw httpError(402, `Card declined: ${amountEur} EUR is over the card's limit of 500 EUR.`);
  return { chargeId: `ch-${ctx.idempotencyKey}` };
});

/** An agent tool: its child reserves the product, then answers (docs/sub-agents.md). */
const stockAgent = defineAgentTool({
  name: 'stock_agent',
  description: 'Reserves a product through the stock agent.',
  input: z.object({ sku: z.string() }),
  goal: ({ sku }) => `Reserve one ${sku}.`,
  tools: ['reserve_stock'],
  model: ({ sku }) => ({
    provider: 'scripted',
    script: [
      { toolCalls: [{ name: 'reserve_stock', arguments: { sku, quantity: 1 } }] },
      { text: `Reserved ${sku}.`, final: true },
    ],
  }),
});

const tools = [
  lookupOrder,
  fetchQuote,
  reserveStockContract.implement(async (_input, ctx) => ({ reservationId: `res-${ctx.idempotencyKey}` })),
  releaseStockContract.implement(async () => ({ released: true })),
  chargeCard,
  stockAgent,
];

/** A run to record: its input and the status it must end in. */
interface Scenario {
  input: Omit<AgentRunInput, 'goal' | 'model'> & { model: ScriptedModelSettings };
  expected: RunStatus;
  /** Generations the run must have (1 unless it continues as new). */
  generations: number;
  /**
   * A forked (or dry) run: `source` is run first under `replay-<name>-source` (its history is not written), then
   * forked from `fromStep` with this scenario's model, dry when `dryRun`.
   */
  fork?: { source: Scenario; fromStep: number; dryRun?: boolean };
}

const reserve = (sku: string) => ({
  text: `Reserving ${sku}.`,
  toolCalls: [{ name: 'reserve_stock', arguments: { sku, quantity: 1 } }],
});

/** The recorded runs: one per workflow code path worth guarding. */
export const SCENARIOS: Record<string, Scenario> = {
  // Tool calls that succeed, a validation failure the model corrects, a compensable step; completes.
  success: {
    expected: 'completed',
    generations: 1,
    input: {
      model: {
        provider: 'scripted',
        script: [
          { text: 'Reading the order.', toolCalls: [{ name: 'lookup_order', arguments: '{"orderId":"A-17"}' }] },
          {
            text: 'Reserving one more.',
            toolCalls: [{ name: 'reserve_stock', arguments: '{"sku":"BOOK-1","quantity":"one"}' }],
          },
          {
            text: 'quantity must be a number.',
            toolCalls: [{ name: 'reserve_stock', arguments: { sku: 'BOOK-1', quantity: 1 } }],
          },
          { text: 'Reserved BOOK-1 for order A-17.', final: true },
        ],
      },
    },
  },
  // A tool that fails transiently twice, then succeeds (history keeps only the last attempt).
  retries: {
    expected: 'completed',
    generations: 1,
    input: {
      model: {
        provider: 'scripted',
        script: [
          { text: 'Asking the carrier.', toolCalls: [{ name: 'fetch_quote', arguments: { weightKg: 3 } }] },
          { text: 'Shipping costs 13.50 EUR.', final: true },
        ],
      },
    },
  },
  // Two reservations, then a critical charge declined for good: the run compensates newest first.
  compensation: compensatedAfterCharge([reserve('BOOK-1'), reserve('LAMP-2')]),
  // Continue-as-new every 2 steps, compensations carried over, then a critical failure in the last
  // generation compensates the reservations of the earlier ones.
  'continue-as-new': {
    expected: 'compensated',
    generations: 3,
    input: {
      continueAsNewAfterSteps: 2,
      failurePolicy: { criticalTools: ['charge_card'] },
      model: {
        provider: 'scripted',
        script: [
          reserve('BOOK-1'),
          { text: 'Checking the order.', toolCalls: [{ name: 'lookup_order', arguments: { orderId: 'A-17' } }] },
          reserve('LAMP-2'),
          { text: 'Checking again.', toolCalls: [{ name: 'lookup_order', arguments: { orderId: 'A-17' } }] },
          { text: 'Charging.', toolCalls: [{ name: 'charge_card', arguments: { amountEur: 900 } }] },
          { text: 'Done.', final: true },
        ],
      },
    },
  },
};

/**
 * A run that plays `turns`, then a critical `charge_card`, declined for good: it compensates what `turns` did, newest
 * first.
 */
function compensatedAfterCharge(turns: ScriptedModelSettings['script']): Scenario {
  return {
    expected: 'compensated',
    generations: 1,
    input: {
      failurePolicy: { criticalTools: ['charge_card'] },
      model: {
        provider: 'scripted',
        script: [
          ...turns,
          { text: 'Charging.', toolCalls: [{ name: 'charge_card', arguments: { amountEur: 900 } }] },
          { text: 'Done.', final: true },
        ],
      },
    },
  };
}

/** The scripted model's turn reading order A-17. */
const READ_ORDER = {
  text: 'Reading the order.',
  toolCalls: [{ name: 'lookup_order', arguments: { orderId: 'A-17' } }],
};

/** A run that completes in one generation, the scripted model playing `script`; a fork of `fork.source` if given. */
function completedScripted(script: ScriptedModelSettings['script'], fork?: Scenario['fork']): Scenario {
  return {
    expected: 'completed',
    generations: 1,
    ...(fork ? { fork } : {}),
    input: { model: { provider: 'scripted', script } },
  };
}

/** The source of the fork scenarios: a lookup and two reservations. */
const FORK_SOURCE = completedScripted([
  READ_ORDER,
  reserve('BOOK-1'),
  reserve('LAMP-2'),
  { text: 'Reserved.', final: true },
]);
// A fork from step 3 of FORK_SOURCE: steps 1-2 taken as recorded (no activity), its own reservation from step 3.
SCENARIOS['forked'] = completedScripted(
  [
    { text: 'not played', final: true },
    { text: 'not played', final: true },
    reserve('DESK-3'),
    { text: 'Reserved the desk instead.', final: true },
  ],
  { source: FORK_SOURCE, fromStep: 3 },
);
// A dry re-run of FORK_SOURCE: the lookup runs, BOOK-1 is answered from the record (activity dry:reserve_stock),
// CHAIR-9 is refused with DRY_RUN_NO_RECORD.
SCENARIOS['dry-run'] = completedScripted(
  [
    READ_ORDER,
    reserve('BOOK-1'),
    reserve('CHAIR-9'),
    { text: 'Reserved the book; the chair has no record.', final: true },
  ],
  { source: FORK_SOURCE, fromStep: 1, dryRun: true },
);

// The four scenarios above were recorded before keys carried the run's first execution id
// (`patched('durable-tools/run-scoped-keys')`): they keep guarding runs started by older code. These two record the
// same paths with run-scoped keys — compensation keys (`${key}/undo`) and the flag carried over continue-as-new.
SCENARIOS['run-scoped-compensation'] = SCENARIOS.compensation!;
SCENARIOS['run-scoped-continue-as-new'] = SCENARIOS['continue-as-new']!;
// A sub-agent (a child workflow) that completes and hands its compensation to the parent, then a critical failure:
// the parent undoes the child's reservation under the child's key. Only the parent's history is recorded (the
// child's result is in it).
SCENARIOS['run-scoped-sub-agents'] = compensatedAfterCharge([
  { text: 'Asking the stock agent.', toolCalls: [{ name: 'stock_agent', arguments: { sku: 'BOOK-1' } }] },
]);

// The fast path (docs/fast-path.md): local model turns and tool calls, a compensable step among them. Recorded
// twice: `fast-path` by the code from before fused steps (ae72cb1: separate local activities, callModelOnce then
// each call), `fast-path-fused` by the code with them (`patched('fast-path-fused')`: one callModelAndTools per turn)
// but before the local tool catalog (describeTools still a regular activity). Re-record them only on purpose.
const CHARGE_AND_CHECK = {
  text: 'Charging, then checking the order.',
  toolCalls: [
    { name: 'charge_card', arguments: { amountEur: 90 } },
    { name: 'lookup_order', arguments: { orderId: 'A-17' } },
  ],
};
/** A fast-path run of `script` that completes in one generation. */
function fastPathRun(script: ScriptedModelSettings['script']): Scenario {
  return { expected: 'completed', generations: 1, input: { fastPath: true, model: { provider: 'scripted', script } } };
}
const FAST_PATH_RUN = fastPathRun([
  READ_ORDER,
  reserve('BOOK-1'),
  CHARGE_AND_CHECK,
  { text: 'Charged and checked.', final: true },
]);
SCENARIOS['fast-path'] = FAST_PATH_RUN;
SCENARIOS['fast-path-fused'] = FAST_PATH_RUN;

// Chained turns (`patched('fast-path-chained')`, docs/fast-path.md): the first turn's fused step asks and runs
// the next turns itself (every call pre-cleared), up to the answer: one callModelAndTools for the whole run.
SCENARIOS['fast-path-chained'] = fastPathRun([
  READ_ORDER,
  CHARGE_AND_CHECK,
  READ_ORDER,
  { text: 'Charged and checked.', final: true },
]);

// The compensation scenario on the fast path, recorded by the code of ae72cb1: describeTools a regular activity,
// model turns and tool calls local activities (markers), the compensations regular activities.
SCENARIOS['fast-path-compensation'] = {
  ...SCENARIOS.compensation!,
  input: { ...SCENARIOS.compensation!.input, fastPath: true },
};

// One patch for the engine's earlier ones (`patched('durable-tools/engine-2026-12')`, src/contract/fast-path.ts):
// a chained fast-path run that continues as new after its second turn's calls (each generation records the one
// patch), and a run on regular activities that continues as new twice (only its first generation records it).
SCENARIOS['engine-2026-12-fast-path'] = {
  expected: 'completed',
  generations: 2,
  input: {
    fastPath: true,
    continueAsNewAfterSteps: 2,
    model: {
      provider: 'scripted',
      script: [READ_ORDER, CHARGE_AND_CHECK, READ_ORDER, { text: 'Charged and checked.', final: true }],
    },
  },
};
SCENARIOS['engine-2026-12-continue-as-new'] = SCENARIOS['continue-as-new']!;

// The first step (`patched('durable-tools/engine-2026-12-first-step')`, docs/fast-path.md): the first fused step
// reads the catalog itself and chains the turns after it, the run continues as new after its second turn's calls
// (the next generation reads its catalog first); and a run on regular activities (the one patch, nothing else new).
SCENARIOS['engine-first-step-fast-path'] = SCENARIOS['engine-2026-12-fast-path']!;
SCENARIOS['engine-first-step-compensation'] = SCENARIOS.compensation!;

// The scenarios above whose input says nothing of `fastPath` were recorded before the fast path became the default:
// they guard runs on regular activities (recorded again, they would take the fast path).
// The fast path by default (`patched('durable-tools/engine-2026-12-fast-default')`, docs/fast-path.md): a run whose
// input says nothing of `fastPath` takes it, and carries `fastPath: true` into its next generation; its sub-agents
// take the parent's (the child's input and workflow task timeout in the parent's history); `fastPath: false` keeps
// regular activities under the same patch.
SCENARIOS['engine-fast-default'] = {
  ...SCENARIOS['engine-2026-12-fast-path']!,
  input: { continueAsNewAfterSteps: 2, model: SCENARIOS['engine-2026-12-fast-path']!.input.model },
};
SCENARIOS['engine-fast-default-sub-agents'] = SCENARIOS['run-scoped-sub-agents']!;
SCENARIOS['engine-fast-default-opt-out'] = {
  ...SCENARIOS.compensation!,
  input: { ...SCENARIOS.compensation!.input, fastPath: false },
};

/** Starts a scenario's run (a fork scenario: after running its source). */
async function startScenario(
  client: Client,
  name: string,
  scenario: Scenario,
): Promise<WorkflowHandleWithFirstExecutionRunId> {
  const runId = `${HISTORY_FIXTURES.workflowIdPrefix}${name}`;
  const options = { taskQueue: HISTORY_FIXTURES.taskQueue };
  if (!scenario.fork) {
    // startAgentRun starts the workflow, so its handle knows the first run of the chain.
    return (await startAgentRun(
      client,
      { goal: `Replay fixture: ${name}`, ...scenario.input, model: { ...scenario.input.model } },
      { ...options, runId },
    )) as WorkflowHandleWithFirstExecutionRunId;
  }
  const source = scenario.fork.source;
  const sourceId = `${runId}-source`;
  const sourceHandle = await startAgentRun(
    client,
    { goal: `Replay fixture: source of ${name}`, ...source.input, model: { ...source.input.model } },
    { ...options, runId: sourceId },
  );
  await waitForAgentRun(sourceHandle);
  return (await forkAgentRun(client, sourceId, {
    fromStep: scenario.fork.fromStep,
    model: { ...scenario.input.model },
    workflowId: runId,
    ...(scenario.fork.dryRun ? { dryRun: true } : {}),
  })) as WorkflowHandleWithFirstExecutionRunId;
}

/**
 * Records `only` (scenario names; all of them when empty) and replaces just their files, so a new scenario can be
 * added without re-recording the histories of older code: `npm run fixtures:record -- run-scoped-compensation`.
 */
async function main(only: string[]): Promise<void> {
  const unknown = only.filter((name) => !(name in SCENARIOS));
  if (unknown.length > 0)
    throw new Error(`No scenario ${unknown.join(', ')}; known: ${Object.keys(SCENARIOS).join(', ')}`);
  const selected = Object.entries(SCENARIOS).filter(([name]) => only.length === 0 || only.includes(name));
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const server = await startDevServer({ ui: false });
  try {
    const client = await connectClient({
      ...connectionSettingsFromEnv({}),
      address: server.address,
      namespace: server.namespace,
    });
    const connection = await NativeConnection.connect({ address: server.address });
    const { worker } = await createWorker({
      // Stores not given here stay in memory (durable ones are the default).
      stores: 'memory',
      tools,
      connection,
      settings: { namespace: server.namespace, taskQueue: HISTORY_FIXTURES.taskQueue },
    });
    const recorded = await worker.runUntil(async () => {
      const files = new Map<string, string>();
      for (const [name, scenario] of selected) {
        const handle = await startScenario(client, name, scenario);
        const result = await waitForAgentRun(handle);
        const histories = await fetchRunHistories(client, handle.workflowId, handle.firstExecutionRunId);
        if (result.status !== scenario.expected || histories.length !== scenario.generations) {
          throw new Error(
            `Scenario ${name} ended ${result.status} after ${histories.length} generation(s); expected ` +
              `${scenario.expected} after ${scenario.generations}. ${result.reason ?? ''}`,
          );
        }
        histories.forEach((history, generation) => {
          const file = histories.length === 1 ? `${name}.json` : `${name}.${generation}.json`;
          files.set(file, `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 2)}\n`);
        });
        console.log(`${name}: ${result.status}, ${histories.length} generation(s), ${result.stepCount} steps`);
      }
      return files;
    });
    await connection.close();
    await client.connection.close();
    mkdirSync(HISTORY_FIXTURES.dir, { recursive: true });
    const names = new Set(selected.map(([name]) => name));
    for (const file of readdirSync(HISTORY_FIXTURES.dir)) {
      if (file.endsWith('.json') && names.has(file.replace(/(\.\d+)?\.json$/, '')))
        rmSync(join(HISTORY_FIXTURES.dir, file));
    }
    for (const [file, json] of recorded) writeFileSync(join(HISTORY_FIXTURES.dir, file), json);
    console.log(`wrote ${recorded.size} histories to ${HISTORY_FIXTURES.dir}`);
  } finally {
    await server.stop();
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
