import { resolveTemporalCli } from '../dev-server/temporal-cli';

/**
 * The `temporal workflow show` command for a run, with the CLI's full path when it is not on PATH (the cached
 * build), so it works as printed; undefined when no CLI is installed.
 */
export async function temporalShowCommand(
  address: string,
  namespace: string,
  workflowId: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
  try {
    const cli = await resolveTemporalCli({ env, build: false });
    const executable = cli.source === 'PATH' ? 'temporal' : cli.path;
    return `${shellQuote(executable)} workflow show --address ${address} --namespace ${namespace} -w ${shellQuote(workflowId)}`;
  } catch {
    return undefined;
  }
}

/** Quotes a word for a POSIX shell when it needs it. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
