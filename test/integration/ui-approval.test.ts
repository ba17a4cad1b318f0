/**
 * What the Temporal web UI shows of a run waiting for approval and of a compensated run, seen by a real browser
 * (Chromium through playwright-core, found by test/support/browser.ts): the waiting run's Current Details name
 * the tool, the step, the digest and the approve command; its timer has a summary; the runs list, filtered
 * by the `DurableRunStatus` query the README gives, lists the compensated run.
 */
import type { Worker } from '@temporalio/worker';
import type { Browser, Page } from 'playwright-core';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import type { DevServer } from '../../src/dev-server/dev-server';
import { startPayAwaitingApproval } from '../support/approval-runs';
import { createApprovalTools } from '../support/approval-tools';
import { describeWithBrowser } from '../support/browser';
import { uniqueTaskQueue } from '../support/temporal-test-env';
import { launchChromium, runPageUrl, startUiDevServer, type UiDevServer } from '../support/ui-dev-server';
import { waitFor } from '../support/wait-for';

/** Generous: the UI loads slowly on a loaded machine. */
const UI_TIMEOUT_MS = 180_000;

/** Each test: longer than the UI's waits. */
const TEST_TIMEOUT_MS = 400_000;

describeWithBrowser('the Temporal UI', (chromiumPath) => {
  let ui: UiDevServer;
  let server: DevServer;
  let browser: Browser;
  let worker: Worker;
  let running: Promise<void>;
  let waiting: { workflowId: string; digest: string };
  let compensatedId: string;

  beforeAll(async () => {
    ui = await startUiDevServer();
    server = ui.server;
    const taskQueue = uniqueTaskQueue('ui-approval');
    worker = await ui.createWorker(taskQueue, { tools: createApprovalTools().tools });
    running = worker.run();
    const gated = await startPayAwaitingApproval(ui.client, taskQueue, 20);
    waiting = { workflowId: gated.handle.workflowId, digest: gated.pending.digest };
    const undone = await startAgentRun(
      ui.client,
      {
        goal: 'Reserve, then look up with bad arguments',
        failurePolicy: { criticalTools: '*' },
        model: {
          provider: 'scripted',
          script: [
            { toolCalls: [{ name: 'reserve', arguments: { item: 'desk' } }] },
            { toolCalls: [{ name: 'lookup', arguments: { unknownField: 1 } }] },
            { text: 'never', final: true },
          ],
        },
      },
      { taskQueue },
    );
    compensatedId = undone.workflowId;
    await expect(waitForAgentRun(undone)).resolves.toMatchObject({ status: 'compensated' });
    browser = await launchChromium(chromiumPath);
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    worker?.shutdown();
    await running;
    await ui?.closeConnections();
    await server?.stop();
  });

  async function runPage(workflowId: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1200 } });
    await page.goto(runPageUrl(server, workflowId), { timeout: UI_TIMEOUT_MS });
    return page;
  }

  test(
    "a waiting run's Current Details show the tool, the step, the digest and the approve command",
    async () => {
      const { workflowId, digest } = waiting;
      const page = await runPage(workflowId);
      await page.getByText('User Metadata', { exact: true }).first().click({ timeout: UI_TIMEOUT_MS });
      // The UI renders the markdown of the details in a sandboxed frame of its own.
      const text = await waitFor(
        'the Current Details',
        async () => {
          const texts = await Promise.all(
            page.frames().map((frame) =>
              frame
                .locator('body')
                .innerText()
                .catch(() => ''),
            ),
          );
          return texts.map((t) => t.replace(/\s+/g, ' ')).find((t) => t.includes('Waiting for approval:'));
        },
        { timeoutMs: UI_TIMEOUT_MS, intervalMs: 500 },
      );
      expect(text).toContain('Waiting for approval: step 1 (pay)');
      expect(text).toContain(`Step 1: pay — arguments digest ${digest}`);
      expect(text).toContain(`npx durable-tools approve ${workflowId} 1 --digest ${digest}`);
    },
    TEST_TIMEOUT_MS,
  );

  test(
    "a waiting run's approval timer shows its summary in the history",
    async () => {
      const page = await runPage(waiting.workflowId);
      await page.getByText('Approval deadline of step 1 (pay)').first().waitFor({ timeout: UI_TIMEOUT_MS });
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'the runs list filtered by DurableRunStatus lists the compensated run and not the waiting one',
    async () => {
      const page = await browser.newPage({ viewport: { width: 1600, height: 1200 } });
      const query = encodeURIComponent('DurableRunStatus="compensated"');
      await page.goto(`${server.uiUrl}/namespaces/${server.namespace}/workflows?query=${query}`, {
        timeout: UI_TIMEOUT_MS,
      });
      const row = page.locator('tr, [role="row"]', { hasText: compensatedId }).first();
      await row.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await row.innerText()).toMatch(/Failed/);
      expect(await page.locator('body').innerText()).not.toContain(waiting.workflowId);
    },
    TEST_TIMEOUT_MS,
  );
});
