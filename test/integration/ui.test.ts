/**
 * What the Temporal web UI shows of a run that ended compensated, seen by a real browser (Debian's headless
 * Chromium, driven by playwright-core): the run is marked Failed in the list and on its page, with the status
 * as the failure's type and message.
 */
import { runToEnd, scriptedRun } from '../support/agent-runs';
import { describeWithBrowser } from '../support/browser';
import { tools } from '../support/cli-tools';
import { uniqueTaskQueue } from '../support/temporal-test-env';
import { runPageUrl, startUiDevServer, useUiTestBed } from '../support/ui-dev-server';

describeWithBrowser('the Temporal web UI', (chromiumPath) => {
  let workflowId: string;
  const bed = useUiTestBed(chromiumPath, startUiDevServer, async (ui) => {
    const taskQueue = uniqueTaskQueue('ui');
    const worker = await ui.createWorker(taskQueue, { tools });
    const script = [
      { toolCalls: [{ name: 'create_order', arguments: { item: 'lamp' } }] },
      { toolCalls: [{ name: 'charge', arguments: { amount: 500 } }] },
      { text: 'Done.', final: true },
    ];
    const { handle, result } = await runToEnd(
      worker,
      ui.client,
      taskQueue,
      scriptedRun('Order a lamp and pay too much', script, { failurePolicy: { criticalTools: ['charge'] } }),
    );
    workflowId = handle.workflowId;
    expect(result.status).toBe('compensated');
  });

  test('the UI lists the compensated run as Failed', async () => {
    const { server, browser } = bed;
    const page = await browser.newPage();
    await page.goto(`${server.uiUrl}/namespaces/${server.namespace}/workflows`, { timeout: 120_000 });
    const row = page.locator('tr, [role="row"], .workflow-summary-row', { hasText: workflowId }).first();
    await row.waitFor({ timeout: 120_000 });
    await expect(row.innerText()).resolves.toMatch(/Failed/);
  });

  test("the run's page shows Failed with the status compensated and why", async () => {
    const { server, browser } = bed;
    const page = await browser.newPage();
    await page.goto(runPageUrl(server, workflowId), { timeout: 120_000 });
    await page.getByText('Run compensated:').first().waitFor({ timeout: 120_000 });
    const text = await page.locator('body').innerText();
    expect(text).toMatch(/Failed/);
    expect(text).toMatch(/Run compensated: Step 2 \(charge\)/);
    expect(text).toContain('Agent run: Order a lamp and pay too much');
  });
});
