import { spawn, type ChildProcess } from 'node:child_process';
import { basename, resolve } from 'node:path';

/**
 * Starts a test worker script (TypeScript, run through tsx) in its own process, with `env` added to this
 * process's environment, so a test can SIGKILL it; resolves once the script prints `readyMarker` (it polls),
 * rejects with everything it printed if it exits first.
 */
export async function spawnWorkerProcess(
  script: string,
  env: Record<string, string>,
  readyMarker: string,
): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: resolve(__dirname, '..', '..'),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolveReady, reject) => {
    const onExit = (code: number | null) => reject(new Error(`${basename(script, '.ts')} exited (${code}): ${output}`));
    child.once('exit', onExit);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(readyMarker)) {
        child.off('exit', onExit);
        resolveReady();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
  });
  return child;
}
