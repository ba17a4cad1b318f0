import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

/** A benchmark worker running in its own process, so its CPU time can be read apart from the bench's. */
export interface ChildWorker {
  pid: number;
  /** CPU time (user + system) the worker process has used so far, in milliseconds. */
  cpuMs(): Promise<number>;
  /** Asks the worker to shut down and waits for the process to exit. */
  stop(): Promise<void>;
}

/** Starts a process: `spawn` itself by default; e.g. a worker host's `spawn` to run it in a network namespace. */
export type SpawnWorker = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;

/**
 * Starts `script` with `node --import tsx` and an IPC channel; resolves once it sends `{ type: 'ready' }`.
 * The script answers `{ type: 'cpu' }` with `{ type: 'cpu', user, system }` (µs) and exits on `{ type: 'stop' }`.
 */
export async function startChildWorker(
  script: string,
  env: NodeJS.ProcessEnv,
  spawnWorker: SpawnWorker = spawn,
): Promise<ChildWorker> {
  const child = spawnWorker(process.execPath, ['--import', 'tsx', script], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, ...env },
  });
  await waitForMessage(child, 'ready', 120_000);
  return {
    pid: child.pid ?? -1,
    cpuMs: async () => {
      const reply = waitForMessage(child, 'cpu', 30_000) as Promise<{ user: number; system: number }>;
      child.send({ type: 'cpu' });
      const { user, system } = await reply;
      return (user + system) / 1000;
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.send({ type: 'stop' });
      await exited;
      clearTimeout(timer);
    },
  };
}

function waitForMessage(child: ChildProcess, type: string, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`The benchmark worker (pid ${child.pid}) sent no "${type}" within ${timeoutMs / 1000} s.`));
    }, timeoutMs);
    const onMessage = (message: { type?: string }) => {
      if (message?.type !== type) return;
      cleanup();
      resolve(message);
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`The benchmark worker exited (code ${code}) before sending "${type}".`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}
