/**
 * What the Temporal web UI shows of a run that ended compensated, seen by a real browser (Debian's headless
 * Chromium, driven by playwright-core): the run is marked Failed in the list and on its page, with the status
 * as the failure's type and message.
 */
import type { Browser } from 'playwright-core';
import { startAgentRun, waitForAgentRun } from '../../src/client/agent-run-client';
import type { DevServer } from '../../src/dev-server/dev-server';
import { describeWithBrowser } from '../support/browser';
import { tools } from '../support/cli-tools';
import { uniqueTaskQueue } from '../support/temporal-test-env';
import { launchChromium, runPageUrl, startUiDevServer } from '../support/ui-dev-server';

describeWithBrowser('the Temporal web UI', (chromiumPath) => {
  let server: DevServer;
  let browser: Browser;
  let workflowId: string;

  beforeAll(async () => {
    const ui = await startUiDevServer();
    server = ui.server;
    const taskQueue = uniqueTaskQueue('ui');
    try {
      const worker = await ui.createWorker(taskQueue, { tools });
      const result = await worker.runUntil(async () => {
        const handle = await startAgentRun(
          ui.client,
          {
            goal: 'Order a lamp and pay too much',
            model: {
              provider: 'scripted',
              script: [
                { toolCalls: [{ name: 'create_order', arguments: { item: 'lamp' } }] },
                { toolCalls: [{ name: 'charge', arguments: { amount: 500 } }] },
                { text: 'Done.', final: true },
              ],
            },
            failurePolicy: { criticalTools: ['charge'] },
          },
          { taskQueue },
        );
        workflowId = handle.workflowId;
        return waitForAgentRun(handle);
      });
      expect(result.status).toBe('compensated');
    } finally {
      await ui.closeConnections();
    }
    browser = await launchChromium(chromiumPath);
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('the UI lists the compensated run as Failed', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.uiUrl}/namespaces/${server.namespace}/workflows`, { timeout: 120_000 });
    const row = page.locator('tr, [role="row"], .workflow-summary-row', { hasText: workflowId }).first();
    await row.waitFor({ timeout: 120_000 });
    await expect(row.innerText()).resolves.toMatch(/Failed/);
  });

  test("the run's page shows Failed with the status compensated and why", async () => {
    const page = await browser.newPage();
    await page.goto(runPageUrl(server, workflowId), { timeout: 120_000 });
    await page.getByText('Run compensated:').first().waitFor({ timeout: 120_000 });
    const text = await page.locator('body').innerText();
    expect(text).toMatch(/Failed/);
    expect(text).toMatch(/Run compensated: Step 2 \(charge\)/);
    expect(text).toContain('Agent run: Order a lamp and pay too much');
  });
});
