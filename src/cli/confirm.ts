import { createInterface } from 'node:readline/promises';

/**
 * Asks a yes/no question on the terminal (stdin and stdout both terminals), or returns undefined when there is
 * none to ask on: the command then acts on what its arguments say, after printing it. Anything but `y`/`yes`,
 * Ctrl-C and Ctrl-D answer no.
 */
export function terminalConfirm(): ((question: string) => Promise<boolean>) | undefined {
  if (process.stdin.isTTY !== true || process.stdout.isTTY !== true) return undefined;
  return async (question) => {
    const prompt = createInterface({ input: process.stdin, output: process.stdout });
    const abort = new AbortController();
    prompt.once('SIGINT', () => abort.abort());
    prompt.once('close', () => abort.abort());
    try {
      return /^y(es)?$/i.test((await prompt.question(question, { signal: abort.signal })).trim());
    } catch {
      process.stdout.write('\n');
      return false;
    } finally {
      prompt.close();
    }
  };
}
