import { Worker } from '@temporalio/worker';
import { z } from 'zod';
import { createModelActivities } from '../../src/activities/model-activities';
import { createToolActivities } from '../../src/activities/tool-activities';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import { scriptedModel, type ScriptedTurn } from '../../src/model/scripted-model';
import type { ModelProvider, ModelRequest } from '../../src/contract/model-types';
import { compensationInput } from '../../src/tools/compensation-input';
import type { Duration } from '@temporalio/common';
import { defineTool, type ToolRetryOptions } from '../../src/tools/define-tool';
import type { ToolContext } from '../../src/tools/tool-context';
import { PermanentToolError, TransientToolError } from '../../src/failures/tool-errors';
import { createToolRegistry } from '../../src/tools/tool-registry';
import type { AgentRunInput, AgentRunResult } from '../../src/contract/agent-run-types';
import { testServer, uniqueTaskQueue, useTestTemporal, type TestTemporal } from '../support/temporal-test-env';

/**
 * Issue 8, "a failure policy that cannot be fooled" and "undo tools are not the model's tools", on the real
 * dev server: a critical tool that ends failed for ANY reason aborts the run and compensates; a run whose
 * critical step did not succeed never ends `completed`; the model never sees an undo tool and cannot call one.
 */

const ran: string[] = [];
const shownTools: string[][] = [];
const fast = { initialDelay: '50 ms', maxDelay: '100 ms' } as const;

const reserve = defineTool({
  name: 'reserve',
  description: 'Reserves a table.',
  input: z.object({ table: z.number().int() }),
  output: z.object({ reservationId: z.string() }),
  effect: 'compensable',
  undo: 'unreserve',
  idempotent: true,
});

/** An irreversible payment tool (no approval) that records its call, then runs `pay`. */
function payTool(
  name: string,
  description: string,
  settings: { idempotent?: boolean; timeout?: Duration; retry?: ToolRetryOptions },
  pay: (ctx: ToolContext) => Promise<{ paid: boolean }>,
) {
  return defineTool({
    name,
    description,
    input: z.object({}),
    output: z.object({ paid: z.boolean() }),
    effect: 'irreversible',
    approval: 'never', // not a test of approvals
    idempotent: settings.idempotent ?? true,
    ...(settings.timeout ? { timeout: settings.timeout } : {}),
    ...(settings.retry ? { retry: settings.retry } : {}),
  }).implement(async (_input, ctx) => {
    ran.push(name);
    return pay(ctx);
  });
}

const tools = [
  reserve.implement(async ({ table }, ctx) => {
    ran.push(`reserve ${table}`);
    return { reservationId: `r-${ctx.stepId}` };
  }),
  defineTool({
    name: 'unreserve',
    description: 'Cancels a reservation (the undo of reserve).',
    input: compensationInput(reserve),
    output: z.object({ cancelled: z.boolean() }),
    effect: 'irreversible',
    idempotent: true,
    retry: fast,
  }).implement(async ({ originalInput }) => {
    ran.push(`unreserve ${originalInput.table}`);
    return { cancelled: true };
  }),
  payTool('pay_declined', 'Pays; the card is always declined.', {}, async () => {
    throw new PermanentToolError('The card was declined.', { code: 'PERMISSION_DENIED' });
  }),
  payTool(
    'pay_flaky',
    'Pays; the provider is always unavailable.',
    { retry: { maximumAttempts: 2, ...fast } },
    async () => {
      throw new TransientToolError('The payment provider is unavailable.', { code: 'UNAVAILABLE' });
    },
  ),
  payTool(
    'pay_slow',
    'Pays; never answers within its timeout.',
    { timeout: '1 second', retry: { maximumAttempts: 2, ...fast } },
    async (ctx) => {
      // Ends on abort too: a promise left pending would keep the worker from shutting down.
      await new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, 3_000);
        ctx.signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            reject(new Error('aborted'));
          },
          { once: true },
        );
      });
      return { paid: true };
    },
  ),
  payTool(
    'pay_uncertain',
    'Pays; the connection drops after the request was sent.',
    { idempotent: false },
    async () => {
      throw new TransientToolError('The connection was reset after the request was sent.', {
        code: 'UNAVAILABLE',
        mayHaveHadEffect: true,
      });
    },
  ),
  payTool('pay_missing', 'Pays; in the catalog, but this worker does not implement it.', {}, async () => ({
    paid: true,
  })),
];

/** The scripted model, recording which tools each turn was shown. */
const recordingModel: ModelProvider = async (request: ModelRequest) => {
  shownTools.push(request.tools.map((tool) => tool.name));
  return scriptedModel({ ...request, settings: { ...request.settings, provider: 'scripted' } });
};

const taskQueue = uniqueTaskQueue('failure-policy');

const temporal = useTestTemporal({ worker: createWorkerWithoutPayMissing });

/** A worker of {@link tools} that advertises pay_missing in its catalog but has no activity of that type. */
async function createWorkerWithoutPayMissing(temporal: TestTemporal): Promise<Worker> {
  const registry = createToolRegistry(tools);
  // The catalog advertises pay_missing, but the worker has no activity of that type (a deployment mistake).
  const activities: Record<string, unknown> = {
    ...createToolActivities({ registry }),
    ...createModelActivities({ registry, providers: { recording: recordingModel } }),
  };
  delete activities.pay_missing;
  return Worker.create({
    connection: temporal.nativeConnection,
    namespace: testServer().namespace,
    taskQueue,
    workflowBundle: { codePath: testServer().bundlePath },
    activities: activities as never,
  });
}

async function run(script: ScriptedTurn[], options: Omit<AgentRunInput, 'goal' | 'model'>): Promise<AgentRunResult> {
  const handle = await startAgentRun(
    temporal.client,
    // Regular activities: this worker is assembled from the engine's internal factories, without the fast
    // path's activities (createWorker and the plugin register those).
    { goal: 'failure policy', model: { provider: 'recording', script }, fastPath: false, ...options },
    { taskQueue },
  );
  return waitForAgentRun(handle);
}

const call = (name: string, args: unknown = {}) => ({ toolCalls: [{ name, arguments: args }] });

/** Reserve table 1, then the critical call, then reserve table 2 (never reached), then finish. */
async function runCritical(tool: string): Promise<AgentRunResult> {
  ran.length = 0;
  return run(
    [call('reserve', { table: 1 }), call(tool), call('reserve', { table: 2 }), { text: 'done', final: true }],
    {
      failurePolicy: { criticalTools: [tool] },
    },
  );
}

describe.each([
  ['a permanent error', 'pay_declined', 'PERMISSION_DENIED'],
  ['retries exhausted on transient errors', 'pay_flaky', 'UNAVAILABLE'],
  ['timeouts on every attempt', 'pay_slow', 'TIMEOUT'],
  ['OUTCOME_UNKNOWN', 'pay_uncertain', 'OUTCOME_UNKNOWN'],
  ['a tool missing on the worker', 'pay_missing', 'TOOL_NOT_REGISTERED'],
])('a critical tool that fails with %s', (_why, tool, code) => {
  let result: AgentRunResult;
  beforeAll(async () => {
    result = await runCritical(tool);
  }, 90_000);

  test('aborts the run, which ends compensated and never completed', () => {
    expect(result.status).toBe('compensated');
    expect(result.reason).toMatch(new RegExp(`^Step 2 \\(${tool}\\) failed (permanently )?with ${code}`));
  });

  test('compensates the step before it and never reaches the step after it', () => {
    expect(result.steps.map((s) => [s.tool, s.status])).toEqual([
      ['reserve', 'compensated'],
      [tool, 'failed'],
    ]);
    expect(ran.filter((r) => r.startsWith('reserve') || r.startsWith('unreserve'))).toEqual([
      'reserve 1',
      'unreserve 1',
    ]);
  });
});

describe('undo tools', () => {
  test('are never shown to the model, even when allowedTools names them', async () => {
    shownTools.length = 0;
    await run([call('reserve', { table: 7 }), { text: 'done', final: true }], {
      allowedTools: ['reserve', 'unreserve'],
    });
    expect(shownTools.length).toBeGreaterThan(0);
    for (const shown of shownTools) expect(shown).toEqual(['reserve']);
  });

  test('are refused as UNKNOWN_TOOL when the model calls one, whatever allowedTools says', async () => {
    ran.length = 0;
    const forged = {
      originalKey: 'someone-else/1',
      originalInput: { table: 9 },
      originalOutput: { reservationId: 'x' },
    };
    for (const allowedTools of [undefined, ['reserve', 'unreserve']]) {
      const result = await run([call('unreserve', forged), { text: 'done', final: true }], {
        ...(allowedTools ? { allowedTools } : {}),
      });
      expect(result.steps[0]).toMatchObject({
        tool: 'unreserve',
        status: 'failed',
        observation: { status: 'error', code: 'UNKNOWN_TOOL', attempts: 0 },
      });
    }
    expect(ran).toEqual([]);
  });
});
