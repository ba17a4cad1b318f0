/**
 * The Temporal web UI's Relationships tab of a run with sub-agents, seen by a real browser (Debian's headless
 * Chromium, driven by playwright-core): the children are listed under their parent, as real child workflows.
 */
import { callTurn, runToEnd, scriptedRun } from '../support/agent-runs';
import { describeWithBrowser } from '../support/browser';
import { startLedgerServer, type LedgerServer } from '../support/ledger-server';
import { subAgentTools } from '../support/sub-agent-tools';
import { uniqueTaskQueue } from '../support/temporal-test-env';
import { runPageUrl, startUiDevServer, useUiTestBed } from '../support/ui-dev-server';

describeWithBrowser('the Temporal web UI', (chromiumPath) => {
  let ledger: LedgerServer;
  let workflowId: string;
  let runId: string;
  const bed = useUiTestBed(chromiumPath, startUiDevServer, async (ui) => {
    ledger = await startLedgerServer();
    const taskQueue = uniqueTaskQueue('ui-sub-agents');
    const worker = await ui.createWorker(taskQueue, { tools: subAgentTools(ledger.url) });
    const { handle, result } = await runToEnd(
      worker,
      ui.client,
      taskQueue,
      scriptedRun('Book flights to BER and LIS', [
        callTurn('flight_agent', { to: 'BER' }),
        callTurn('flight_agent', { to: 'LIS' }),
        { text: 'Both booked.', final: true },
      ]),
    );
    expect(result.status).toBe('completed');
    workflowId = handle.workflowId;
    runId = (await handle.describe()).runId;
  });
  afterAll(() => ledger?.close());

  test("the parent's Relationships tab shows its tree: two sub-agents", async () => {
    const { server, browser } = bed;
    const page = await browser.newPage();
    await page.goto(`${runPageUrl(server, workflowId)}/${runId}/relationships`, { timeout: 120_000 });
    await page.getByText('Child Count').first().waitFor({ timeout: 120_000 });
    const text = await page.locator('body').innerText();
    expect(text).toMatch(/Relationships\s*2/);
    expect(text).toMatch(/Child Count\s*2/);
  });
});
