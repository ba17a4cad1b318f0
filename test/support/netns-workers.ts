import type { ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { join, resolve } from 'node:path';
import type { NetnsHost } from './netns-network';
import { NETNS_WORKER_ENV, NETNS_WORKER_READY } from './netns-worker';

const REPO_ROOT = resolve(__dirname, '..', '..');
const NETNS_WORKER_SCRIPT = join(__dirname, 'netns-worker.ts');

/** Timing of the host worker processes. */
export const NETNS_WORKER_SETTINGS = {
  /** A loaded machine can take a minute or more to start a worker (bundle load, connections). */
  readyTimeoutMs: 240_000,
  /** Graceful stop before the process is killed. */
  stopGraceMs: 15_000,
} as const;

/** Where the host workers connect, as seen from inside the namespaces. */
export interface NetnsWorkerTarget {
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  bundlePath: string;
  ledgerUrl: string;
  postgresUrl: string;
  keysTable: string;
  transcriptsTable: string;
  /** Directory for the per-host worker logs. */
  workDir: string;
}

/** The worker process of one host. */
export interface HostWorker {
  host: NetnsHost;
  /** Which process of this host it is (1 for the first, +1 after each host restart). */
  generation: number;
  pid: number;
  child: ChildProcess;
  exited: Promise<void>;
  /** Set before the harness kills or stops it: an exit that is not is a worker death. */
  expectedExit: boolean;
}

/** A worker process that exited without the harness killing or stopping it. */
export interface HostWorkerDeath {
  host: number;
  generation: number;
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * One worker process per host: starts them (`ip netns exec`), SIGKILLs a whole host (every process in its
 * namespace) and restarts it, stops them all. Exits the harness did not cause are recorded as deaths.
 */
export class NetnsWorkers {
  readonly byHost = new Map<number, HostWorker>();
  readonly deaths: HostWorkerDeath[] = [];
  private readonly generations = new Map<number, number>();
  private readonly logs = new Map<number, WriteStream>();

  constructor(
    private readonly target: NetnsWorkerTarget,
    private readonly log: (line: string) => void,
  ) {}

  /** The worker whose process has this pid (the ledger learns the sender's pid from a header). */
  byPid(pid: number | undefined): HostWorker | undefined {
    return [...this.byHost.values()].find((worker) => worker.pid === pid);
  }

  /** Starts the host's (next) worker process and waits until it polls. */
  async start(host: NetnsHost): Promise<HostWorker> {
    const startedAt = Date.now();
    const generation = (this.generations.get(host.index) ?? 0) + 1;
    this.generations.set(host.index, generation);
    const logFile = this.logFile(host);
    logFile.write(`--- host ${host.index} worker ${generation} ---\n`);
    const t = this.target;
    const env = NETNS_WORKER_ENV;
    const child = host.spawn(process.execPath, ['--import', 'tsx', NETNS_WORKER_SCRIPT], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        [env.address]: t.temporalAddress,
        [env.namespace]: t.namespace,
        [env.taskQueue]: t.taskQueue,
        [env.bundlePath]: t.bundlePath,
        [env.ledgerUrl]: t.ledgerUrl,
        [env.postgresUrl]: t.postgresUrl,
        [env.keysTable]: t.keysTable,
        [env.transcriptsTable]: t.transcriptsTable,
        [env.host]: String(host.index),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const worker: HostWorker = {
      host,
      generation,
      pid: child.pid ?? -1,
      child,
      exited: Promise.resolve(),
      expectedExit: false,
    };
    worker.exited = new Promise<void>((resolveExit) =>
      child.once('exit', (code, signal) => {
        logFile.write(`--- host ${host.index} worker ${generation} exited (code ${code}, signal ${signal}) ---\n`);
        if (this.byHost.get(host.index) === worker) this.byHost.delete(host.index);
        if (!worker.expectedExit) {
          this.deaths.push({ host: host.index, generation, code, signal });
          this.log(
            `chaos: WORKER DEATH: host ${host.index} worker ${generation} exited (code ${code}, signal ${signal})`,
          );
        }
        resolveExit();
      }),
    );
    child.stderr!.pipe(logFile, { end: false });
    this.byHost.set(host.index, worker);
    await this.ready(worker, logFile);
    this.log(
      `chaos: host ${host.index} worker ${generation} (pid ${worker.pid}) ready in ${Date.now() - startedAt} ms`,
    );
    return worker;
  }

  /** SIGKILLs every process of the host at once (the host dies) and waits until its worker is gone. */
  async killHost(host: NetnsHost): Promise<void> {
    const worker = this.byHost.get(host.index);
    if (worker) worker.expectedExit = true;
    for (const pid of host.pids()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await worker?.exited;
  }

  /** Stops every worker (SIGTERM, SIGKILL after a grace period) and closes the logs. */
  async stop(): Promise<void> {
    await Promise.all(
      [...this.byHost.values()].map(async (worker) => {
        worker.expectedExit = true;
        worker.child.kill('SIGTERM');
        const timer = setTimeout(() => worker.child.kill('SIGKILL'), NETNS_WORKER_SETTINGS.stopGraceMs);
        await worker.exited;
        clearTimeout(timer);
      }),
    );
    await Promise.all(
      [...this.logs.values()].map((stream) => new Promise<void>((resolveEnd) => stream.end(resolveEnd))),
    );
  }

  private logFile(host: NetnsHost): WriteStream {
    let stream = this.logs.get(host.index);
    if (!stream) {
      stream = createWriteStream(join(this.target.workDir, `host-${host.index}.log`), { flags: 'a' });
      this.logs.set(host.index, stream);
    }
    return stream;
  }

  private ready(worker: HostWorker, logFile: WriteStream): Promise<void> {
    const { child } = worker;
    return new Promise<void>((resolveReady, reject) => {
      let output = '';
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `Host ${worker.host.index}'s worker did not start within ${NETNS_WORKER_SETTINGS.readyTimeoutMs} ms.`,
            ),
          ),
        NETNS_WORKER_SETTINGS.readyTimeoutMs,
      );
      const onExit = (code: number | null): void => {
        clearTimeout(timer);
        reject(
          new Error(
            `Host ${worker.host.index}'s worker exited (code ${code}) before it was ready; ` +
              `see ${join(this.target.workDir, `host-${worker.host.index}.log`)}`,
          ),
        );
      };
      child.once('exit', onExit);
      child.stdout!.on('data', (chunk: Buffer) => {
        logFile.write(chunk);
        if (output.includes(NETNS_WORKER_READY)) return;
        output += chunk.toString('utf8');
        if (output.includes(NETNS_WORKER_READY)) {
          clearTimeout(timer);
          child.off('exit', onExit);
          resolveReady();
        }
      });
    });
  }
}
