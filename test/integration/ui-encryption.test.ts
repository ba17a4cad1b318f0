/**
 * Issue 15 part 2, seen by a real browser (Debian's headless Chromium, driven by playwright-core): a local dev
 * server whose web UI is started with `--ui-codec-endpoint` pointing at the codec server shows an encrypted
 * run's arguments in clear, while the history itself holds ciphertext (checked in encryption.test.ts with
 * `temporal workflow show -o json`, and here through the server's own API).
 */
import { Client } from '@temporalio/client';
import { runToEnd, scriptedRun } from '../support/agent-runs';
import { findFreePort } from '../../src/dev-server/free-port';
import { startCodecServer, type CodecServer } from '../../src/encryption/codec-server';
import { encryptedDataConverter } from '../../src/encryption/encryption-codec';
import { describeWithBrowser } from '../support/browser';
import { tools } from '../support/cli-tools';
import { keyEntry, keyringOf } from '../support/encryption-keys';
import { uniqueTaskQueue } from '../support/temporal-test-env';
import { runPageUrl, startUiDevServer, useUiTestBed } from '../support/ui-dev-server';

const ITEM = 'lamp for Grace Hopper at 7 Harbour Road';
const keyring = keyringOf(keyEntry('ui-key'));

describeWithBrowser('the Temporal web UI with the codec server', (chromiumPath) => {
  let codec: CodecServer;
  let workflowId: string;
  const decodeRequests: string[] = [];
  const start = async () => {
    const uiPort = await findFreePort();
    codec = await startCodecServer({ keyring, port: 0, corsOrigins: [`http://127.0.0.1:${uiPort}`] });
    return startUiDevServer({ uiPort, uiCodecEndpoint: codec.url }, encryptedDataConverter(keyring)!);
  };
  const bed = useUiTestBed(chromiumPath, start, async (ui) => {
    const taskQueue = uniqueTaskQueue('ui-encryption');
    const worker = await ui.createWorker(taskQueue, { tools, encryption: keyring });
    const script = [
      { toolCalls: [{ name: 'create_order', arguments: { item: ITEM } }] },
      { text: 'Done.', final: true },
    ];
    const { handle, result } = await runToEnd(worker, ui.client, taskQueue, scriptedRun('Order a lamp', script));
    workflowId = handle.workflowId;
    expect(result.status).toBe('completed');
    // The server holds ciphertext: the raw history (no codec) does not contain the item.
    const raw = new Client({ connection: ui.connection, namespace: ui.server.namespace });
    const history = JSON.stringify(await raw.workflow.getHandle(workflowId).fetchHistory());
    expect(history).not.toContain('Grace Hopper');
  });
  afterAll(async () => {
    await codec?.close();
  });

  test("the UI shows the encrypted run's arguments decoded through the codec server", async () => {
    const { server, browser } = bed;
    const page = await browser.newPage();
    page.on('request', (request) => {
      if (request.url().startsWith(codec.url)) decodeRequests.push(request.url());
    });
    await page.goto(runPageUrl(server, workflowId), { timeout: 120_000 });
    await page.getByText('Grace Hopper').first().waitFor({ timeout: 120_000 });
    expect(await page.locator('body').innerText()).toContain(ITEM);
    expect(decodeRequests.some((url) => url.endsWith('/decode'))).toBe(true);
    // The page's own waits decide (120 s each); on a loaded machine the two together outlast jest's default.
  }, 300_000);
});
