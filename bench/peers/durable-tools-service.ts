/**
 * The durable-tools service process of `npm run bench:peers`: a worker (`createWorker` defaults, the SQLite key
 * store) with one tool with effects, `ledger_step`, which POSTs to the ledger under its idempotency key and
 * settles an unknown outcome after a crash with `reconcile` (asks the ledger whether the key has an effect),
 * and the client that starts the runs: a scripted model makes one `ledger_step` call per turn.
 */
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { z } from 'zod';
import { AGENT_RUN_WORKFLOW } from '../../src/client/agent-run-client';
import type { AgentRunInput, AgentRunResult } from '../../src/contract/agent-run-types';
import type { ScriptedModelSettings } from '../../src/model/scripted-model';
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
  /** A workflow bundle built once by the bench (`workflowBundle: { codePath }`). */
  bundlePath: string;
  storePath: string;
  /** Merged into every run's input: how a variant (e.g. a fast path) changes the run. */
  runInput?: Partial<AgentRunInput>;
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
export function ledgerRunInput(steps: number, overrides: Partial<AgentRunInput> = {}): AgentRunInput {
  const model: ScriptedModelSettings = {
    provider: 'scripted',
    script: Array.from({ length: steps }, (_, i) => ({
      toolCalls: [{ name: 'ledger_step', arguments: { n: i + 1 } }],
    })),
    finalText: `Done after ${steps} steps.`,
  };
  return {
    goal: 'Record the steps.',
    model: model as unknown as AgentRunInput['model'],
    limits: { maxSteps: steps, maxTurns: steps + 1 },
    trackStatusSearchAttribute: false,
    ...overrides,
  };
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const { ledgerUrl, steps, config } = serviceEnv<DurableToolsServiceConfig>();
  const store = new SqliteIdempotencyStore({ path: config.storePath });
  const nativeConnection = await NativeConnection.connect({ address: config.address });
  const connection = await Connection.connect({ address: config.address });
  const client = new Client({ connection, namespace: config.namespace });
  const { worker } = await createWorker({
    tools: [ledgerStepTool(ledgerUrl)],
    connection: nativeConnection,
    settings: { namespace: config.namespace, taskQueue: config.taskQueue },
    workflowBundle: { codePath: config.bundlePath },
    idempotencyStore: store,
  });
  const running = worker.run();
  const check = (runId: string, result: AgentRunResult): void => {
    if (result.status !== 'completed' || result.stepCount !== steps) {
      throw new Error(`run ${runId} ended ${result.status} after ${result.stepCount} steps`);
    }
  };
  serveParent({
    async run(runId, started) {
      const handle = await client.workflow.start(AGENT_RUN_WORKFLOW, {
        taskQueue: config.taskQueue,
        workflowId: runId,
        args: [ledgerRunInput(steps, config.runInput)],
      });
      started();
      check(runId, (await handle.result()) as AgentRunResult);
    },
    async attach(runId) {
      check(runId, (await client.workflow.getHandle(runId).result()) as AgentRunResult);
    },
    async close() {
      worker.shutdown();
      await running;
      await connection.close();
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
