import { runCli } from '../../src/cli/main';

/** What one in-process run of the command line returned and wrote. */
export interface CliInProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the command line in this process (`runCli`), capturing what it writes to stdout and stderr instead of
 * printing it (for the cheap checks that need no separate process).
 */
export async function runCliInProcess(argv: string[]): Promise<CliInProcessResult> {
  let stdout = '';
  let stderr = '';
  const out = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  try {
    return { code: await runCli(argv), stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}
