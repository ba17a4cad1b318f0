/**
 * The durable-tools service process of `npm run bench:peers`: a worker (`createWorker` defaults, the SQLite key
 * store) with one tool with effects, `ledger_step`, which POSTs to the ledger under its idempotency key and
 * settles an unknown outcome after a crash with `reconcile` (asks the ledger whether the key has an effect),
 * and the client that starts the runs: a scripted model makes one `ledger_step` call per turn.
 */
import { Client, Connection } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { z } from 'zod';
import { startAgentRun } from '../../src/client/agent-run-client';
import type { AgentRunInput, AgentRunResult } from '../../src/contract/agent-run-types';
import type { ModelProvider } from '../../src/contract/model-types';
import { scriptedModel, type ScriptedModelSettings } from '../../src/model/scripted-model';
import { createWorker } from '../../src/runtime/create-worker';
import { SqliteIdempotencyStore } from '../../src/stores/idempotency/sqlite-idempotency-store';
import { defineTool } from '../../src/tools/define-tool';
import { postEffect } from './peer-ledger';
import { serveParent, serviceEnv } from './service-protocol';

/** Settings of this service (from the bench). */
export interface DurableToolsServiceConfig {
  address: string;
  namespace: string;
  taskQueue: string;
  /**
   * A workflow bundle built once by the bench (`workflowBundle: { codePath }`); `cache` uses `createWorker`'s
   * default (the cached bundle), `bundle-at-start` turns that cache off.
   */
  bundlePath: string | 'cache' | 'bundle-at-start';
  storePath: string;
  /** Merged into every run's input: how a variant (e.g. a fast path) changes the run. */
  runInput?: Partial<AgentRunInput>;
  /**
   * `npm run bench:recovery`: each model turn first records `<run id>/model-turn-<n>` at the ledger (so the
   * bench can kill the worker during the turn), then takes this long before the scripted answer.
   */
  modelTurnMs?: number;
  /** The runs' workflow task timeout (`startAgentRun`'s `workflowTaskTimeout`; default startAgentRun's). */
  workflowTaskTimeout?: string;
  /** The SQLite key store's group commit (default on; false: a commit per write). */
  groupCommit?: boolean;
  /** The SQLite key store's `synchronous` (default `FULL`; `NORMAL`: no fsync at a commit, only at checkpoints). */
  synchronous?: 'FULL' | 'NORMAL';
  /** `false`: the key store's group commit fsyncs inside SQLite's commit, on the event loop (default: off it). */
  syncOffEventLoop?: boolean;
  /**
   * Temporal's eager workflow start (`startAgentRun`'s `eagerStart`: the client on the worker's connection, the
   * first workflow task handed back in the start's answer). Default on; false: the first task waits for a poll.
   */
  eagerStart?: boolean;
}

/** Ledger key the slow model of {@link DurableToolsServiceConfig.modelTurnMs} records at the start of a turn. */
export function modelTurnKey(runId: string, turn: number): string {
  return `${runId}/model-turn-${turn}`;
}

/** A model provider that marks each turn at the ledger, waits `ms`, then answers from the script. */
function slowScriptedModel(ledgerUrl: string, ms: number): ModelProvider {
  return async (request, { signal }) => {
    await postEffect(ledgerUrl, modelTurnKey(request.goal, request.turn));
    await new Promise((resolve) => setTimeout(resolve, ms));
    signal.throwIfAborted();
    return scriptedModel(request);
  };
}

/** The benchmark's tool: one effect at the ledger per call, under the call's idempotency key. */
export function ledgerStepTool(ledgerUrl: string) {
  return defineTool({
    name: 'ledger_step',
    description: 'Records one step at the benchmark ledger. Not idempotent downstream: the ledger keeps every write.',
    input: z.object({ n: z.number().int() }),
    output: z.object({ recorded: z.boolean() }),
    effect: 'irreversible',
    idempotent: false,
    approval: 'never',
  }).implement(
    async (_input, ctx) => {
      await postEffect(ledgerUrl, ctx.idempotencyKey);
      return { recorded: true };
    },
    {
      reconcile: async (key) => {
        const response = await fetch(`${ledgerUrl}/effects?key=${encodeURIComponent(key)}`);
        const { effects } = (await response.json()) as { effects: number };
        return effects > 0 ? { done: true, output: { recorded: true } } : { done: false };
      },
    },
  );
}

/** A run of `steps` `ledger_step` calls, one per scripted model turn, then a final answer. */
export function ledgerRunInput(
  runId: string,
  steps: number,
  overrides: Partial<AgentRunInput> = {},
  provider = 'scripted',
): AgentRunInput {
  const model: Omit<ScriptedModelSettings, 'provider'> & { provider: string } = {
    provider,
    script: Array.from({ length: steps }, (_, i) => ({
      toolCalls: [{ name: 'ledger_step', arguments: { n: i + 1 } }],
    })),
    finalText: `Done after ${steps} steps.`,
  };
  return {
    // The run id, so the bench's slow model can name its ledger marks.
    goal: runId,
    model: model as unknown as AgentRunInput['model'],
    limits: { maxSteps: steps, maxTurns: steps + 1 },
    trackStatusSearchAttribute: false,
    ...overrides,
  };
}

async function main(): Promise<void> {
  // PEERS_LOG_LEVEL=WARN (or INFO, DEBUG) shows the worker's log, e.g. its dead-holder takeovers.
  Runtime.install({ logger: new DefaultLogger((process.env.PEERS_LOG_LEVEL as 'WARN' | undefined) ?? 'ERROR') });
  const { ledgerUrl, steps, config } = serviceEnv<DurableToolsServiceConfig>();
  const store = new SqliteIdempotencyStore({
    path: config.storePath,
    ...(config.groupCommit === false ? { groupCommit: false } : {}),
    ...(config.synchronous ? { synchronous: config.synchronous } : {}),
    ...(config.syncOffEventLoop === false ? { syncOffEventLoop: false } : {}),
  });
  const nativeConnection = await NativeConnection.connect({ address: config.address });
  const eager = config.eagerStart !== false;
  // Eager start needs the client on the worker's own connection (startAgentRun's eagerStart).
  const connection = eager ? undefined : await Connection.connect({ address: config.address });
  const client = new Client({ connection: connection ?? nativeConnection, namespace: config.namespace });
  const { worker } = await createWorker({
    // Stores not given here stay in memory (durable ones are the default).
    stores: 'memory',
    tools: [ledgerStepTool(ledgerUrl)],
    connection: nativeConnection,
    settings: { namespace: config.namespace, taskQueue: config.taskQueue },
    ...(config.bundlePath === 'cache'
      ? {}
      : config.bundlePath === 'bundle-at-start'
        ? { workflowBundleCache: false as const }
        : { workflowBundle: { codePath: config.bundlePath } }),
    idempotencyStore: store,
    ...(config.modelTurnMs ? { modelProviders: { slow: slowScriptedModel(ledgerUrl, config.modelTurnMs) } } : {}),
  });
  const running = worker.run();
  const check = (runId: string, result: AgentRunResult): void => {
    if (result.status !== 'completed' || result.stepCount !== steps) {
      throw new Error(`run ${runId} ended ${result.status} after ${result.stepCount} steps`);
    }
  };
  serveParent({
    async run(runId, started) {
      // As an application starts them: startAgentRun's defaults (a fast-path run's workflow task timeout).
      const handle = await startAgentRun(
        client,
        ledgerRunInput(runId, steps, config.runInput, config.modelTurnMs ? 'slow' : 'scripted'),
        {
          taskQueue: config.taskQueue,
          workflowId: runId,
          ...(eager ? { eagerStart: true } : {}),
          ...(config.workflowTaskTimeout ? { workflowTaskTimeout: config.workflowTaskTimeout as Duration } : {}),
        },
      );
      started();
      check(runId, (await handle.result()) as AgentRunResult);
    },
    async attach(runId) {
      check(runId, (await client.workflow.getHandle(runId).result()) as AgentRunResult);
    },
    async close() {
      worker.shutdown();
      await running;
      await connection?.close();
      await nativeConnection.close();
      await store.close();
    },
  });
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
