import { spawn, type ChildProcess } from 'node:child_process';
import { basename, resolve } from 'node:path';
import { testServer } from './temporal-test-env';

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
  return (await spawnScriptProcess(script, env, readyMarker)).child;
}

/** {@link spawnWorkerProcess}, resolving also with what the script printed up to its ready line. */
export async function spawnScriptProcess(
  script: string,
  env: Record<string, string>,
  readyMarker: string,
): Promise<{ child: ChildProcess; output: string }> {
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
  return { child, output };
}

/** The names of the variables by which a worker process is told the server, namespace, bundle and task queue. */
export interface WorkerServerEnv {
  address: string;
  namespace: string;
  taskQueue: string;
  bundlePath: string;
}

/** A test worker script: its file, the names of the variables it reads, and the line it prints once it polls. */
export interface TestWorkerScript<E extends WorkerServerEnv> {
  script: string;
  env: E;
  ready: string;
}

/**
 * Starts `worker` in its own process (see {@link spawnWorkerProcess}) on the test dev server and its workflow
 * bundle, polling `taskQueue`; `settings` gives its other variables by their names in `worker.env`, `extraEnv`
 * adds variables as they are.
 */
export function spawnTestWorkerProcess<E extends WorkerServerEnv>(
  worker: TestWorkerScript<E>,
  taskQueue: string,
  settings: Partial<Record<Exclude<keyof E, keyof WorkerServerEnv>, string>>,
  extraEnv: Record<string, string> = {},
): Promise<ChildProcess> {
  const { address, namespace, bundlePath } = testServer();
  const env: Record<string, string> = {
    [worker.env.address]: address,
    [worker.env.namespace]: namespace,
    [worker.env.taskQueue]: taskQueue,
    [worker.env.bundlePath]: bundlePath,
    ...extraEnv,
  };
  for (const [name, value] of Object.entries(settings) as [keyof E & string, string | undefined][]) {
    if (value !== undefined) env[worker.env[name] as string] = value;
  }
  return spawnWorkerProcess(worker.script, env, worker.ready);
}

/** SIGKILLs `child` and resolves once it has exited. */
export async function killProcess(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolveExit) => child.once('exit', resolveExit));
  child.kill('SIGKILL');
  await exited;
}
