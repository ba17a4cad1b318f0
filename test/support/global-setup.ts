import { bundleWorkflowCode } from '@temporalio/worker';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevServer, type DevServer } from '../../src/dev-server/dev-server';
import { engineBundleOptions } from '../../src/runtime/engine-bundle-options';

declare global {
  var __durableToolsDevServer: DevServer | undefined;
}

/**
 * Starts one real Temporal dev server for the whole test run (the CLI is found or built like in
 * production) and bundles the workflows once; tests read both from the environment.
 */
export default async function globalSetup(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'durable-tools-test-'));
  const server = await startDevServer({ ui: false, logFile: join(dir, 'temporal-server.log') });
  globalThis.__durableToolsDevServer = server;
  process.env.DT_TEST_TEMPORAL_ADDRESS = server.address;
  process.env.DT_TEST_NAMESPACE = server.namespace;
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../src/workflows'),
    ...engineBundleOptions(),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } as never,
  });
  const bundlePath = join(dir, 'workflow-bundle.js');
  writeFileSync(bundlePath, code);
  process.env.DT_TEST_WORKFLOW_BUNDLE = bundlePath;
  process.env.DT_TEST_DIR = dir;
}
