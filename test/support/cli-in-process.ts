import { join } from 'node:path';
import { runCli } from '../../src/cli/main';
import { testServer } from './temporal-test-env';

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

/** The environment that points the command line at the test server, with no Temporal config file (none in `dir`). */
export function testServerCliEnv(dir: string): NodeJS.ProcessEnv {
  return {
    TEMPORAL_ADDRESS: testServer().address,
    TEMPORAL_NAMESPACE: testServer().namespace,
    TEMPORAL_CONFIG_FILE: join(dir, 'no-temporal.toml'),
  };
}

/** Sets `env` in `process.env` (which {@link runCliInProcess} reads) and gives back a function restoring it as it was. */
function setProcessEnv(env: NodeJS.ProcessEnv): () => void {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  return () => {
    for (const name of Object.keys(env)) delete process.env[name];
    Object.assign(process.env, saved);
  };
}

/** Sets `env` in `process.env` for the tests of the enclosing `describe` block, and restores it after them. */
export function useProcessEnv(env: NodeJS.ProcessEnv): void {
  let restore: (() => void) | undefined;
  beforeAll(() => {
    restore = setProcessEnv(env);
  });
  afterAll(() => restore?.());
}

/** Runs `work` with `env` set in `process.env`, restored after. */
export async function withProcessEnv<T>(env: NodeJS.ProcessEnv, work: () => Promise<T>): Promise<T> {
  const restore = setProcessEnv(env);
  try {
    return await work();
  } finally {
    restore();
  }
}
